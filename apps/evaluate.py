"""The evaluation report: one or more solution sets against every baseline, as the CUDA-L1 paper reports.

    uv run apps/evaluate.py --set kernelzoo=kernelzoo --out reports/zoo              # all baselines the device has
    uv run apps/evaluate.py --set mine=runs/opt/best --set zoo=kernelzoo --suite builtin:level1 \\
                            --baselines eager,compile --out reports/mine-vs-zoo     # two sets side by side
    uv run apps/evaluate.py --set kernelzoo=kernelzoo --out reports/zoo --report-only  # re-render, run nothing

``--set NAME=SOLUTIONS``: SOLUTIONS is a folder of ``<task name>.py`` files defining ``ModelNew``, the name
of an installed solution set (``kernelzoo``), or ``reference`` (each task's own reference: a check of the
harness, its speedups are 1x up to noise). Baselines: eager, compile, compile-reduce-overhead, cudagraph,
cudnn (the last three need a GPU; default: every baseline the device has).

Writes into ``--out``: ``results.sqlite`` (every result as it is measured; a rerun with the same folder
evaluates only what is missing), ``device.json`` (measured copy bandwidth and fp32 matmul rate, for the
roofline), ``work.json`` (each task's FLOPs and ideal bytes), ``report.json``, ``report.md`` and
``report.html`` (self-contained, with plots). Exit codes: 0 done; 2 bad arguments (one line on stderr).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """A bad argument: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="evaluate.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", dest="sets", action="append", required=True, metavar="NAME=SOLUTIONS",
                   help="a solution set: NAME=folder | NAME=installed set (kernelzoo) | NAME=reference; repeatable")
    p.add_argument("--suite", default="builtin", help="builtin | builtin:levelN | kernelbench:PATH | dir:PATH")
    p.add_argument("--tasks", metavar="A,B", help="only these tasks of the suite")
    p.add_argument("--baselines", metavar="B,C", help="comma-separated baselines (default: all the device has)")
    p.add_argument("--device", choices=["cpu", "cuda"],
                   help="default: cuda when a GPU is visible, else cpu (with --report-only: the device the results "
                        "were measured on)")
    p.add_argument("--trials", type=int, help="correctness trials per candidate (harness default 5)")
    p.add_argument("--timeout", type=float, metavar="S", help="limit in seconds for loading and running a candidate")
    p.add_argument("--time-budget", type=float, metavar="S",
                   help="seconds of timed work per measurement attempt (harness default 1.5)")
    p.add_argument("--out", help="output folder (default runs/report-<timestamp>)")
    p.add_argument("--title", default="cudal1 evaluation report")
    p.add_argument("--report-only", action="store_true", help="evaluate nothing: report what the store holds")
    p.add_argument("--baseline-set", dest="baseline_sets", action="append", default=[],
                   metavar="BASELINE:NAME=SOLUTIONS",
                   help="with --report-only: look up set NAME's results against BASELINE in these files instead (the "
                        "store keys a result by the candidate's exact source: for a set whose files changed, e.g. a "
                        "docstring, between the runs of two baselines); repeatable")
    p.add_argument("--no-peaks", action="store_true", help="do not measure the device's peaks (no roofline plot)")
    p.add_argument("--quiet", action="store_true", help="no per-task progress lines")
    return p


def parse_sets(specs: list[str]) -> list[tuple[str, str]]:
    """[(name, solutions)] from ``NAME=SOLUTIONS`` strings; UsageError for a malformed or repeated name."""
    out: list[tuple[str, str]] = []
    for spec in specs:
        name, eq, sol = spec.partition("=")
        name, sol = name.strip(), sol.strip()
        if not eq or not name or not sol:
            raise UsageError(f"--set {spec!r}: write NAME=SOLUTIONS, e.g. --set zoo=kernelzoo or --set mine=out/best")
        if not all(c.isalnum() or c in "-_." for c in name):
            raise UsageError(f"--set {spec!r}: a set name may hold letters, digits, '-', '_' and '.' only")
        if name in {n for n, _ in out}:
            raise UsageError(f"--set: the name {name!r} is given twice")
        out.append((name, sol))
    return out


def parse_baseline_sets(specs: list[str], sets: list[tuple[str, str]], baselines: list[str],
                        report_only: bool) -> dict[tuple[str, str], str]:
    """{(set name, baseline): solutions} from ``BASELINE:NAME=SOLUTIONS`` strings (``--baseline-set``)."""
    out: dict[tuple[str, str], str] = {}
    for spec in specs:
        if not report_only:
            raise UsageError("--baseline-set only changes what --report-only looks up; an evaluation measures one "
                             "set's files against every baseline")
        b, colon, rest = spec.partition(":")
        name, eq, sol = rest.partition("=")
        b, name, sol = b.strip(), name.strip(), sol.strip()
        if not colon or not eq or not b or not name or not sol:
            raise UsageError(f"--baseline-set {spec!r}: write BASELINE:NAME=SOLUTIONS, e.g. "
                             "--baseline-set compile:kb=out/measured-compile")
        if b not in baselines:
            raise UsageError(f"--baseline-set {spec!r}: {b!r} is not one of the reported baselines "
                             f"({', '.join(baselines)})")
        if name not in {n for n, _ in sets}:
            raise UsageError(f"--baseline-set {spec!r}: no --set is named {name!r}")
        if (name, b) in out:
            raise UsageError(f"--baseline-set: {b}:{name} is given twice")
        out[name, b] = sol
    return out


def set_pairs(solutions: str, tasks: list[Any]) -> list[tuple[Any, Any]]:
    """(task, candidate) pairs of one set: ``reference`` or a folder / installed set (cudal1-eval's rules)."""
    from cudal1.harness.solutions import SolutionSetError, load_solutions
    from cudal1.harness.suite import reference_candidate

    if solutions == "reference":
        return [(t, reference_candidate(t)) for t in tasks]
    try:
        pairs, unknown = load_solutions(solutions, tasks)
    except SolutionSetError as e:
        raise UsageError(str(e)) from e
    for name in unknown:
        print(f"evaluate: {solutions}/{name} matches no task of the suite; ignored", file=sys.stderr)
    if not pairs:
        raise UsageError(f"no file of {solutions} is named after a task of the suite")
    return pairs


def _baselines(spec: str | None, device: str) -> list[str]:
    from cudal1.harness.config import BASELINES, CUDA_ONLY_BASELINES

    if spec is None:
        return [b for b in BASELINES if device == "cuda" or b not in CUDA_ONLY_BASELINES]
    chosen = [b.strip() for b in spec.split(",") if b.strip()]
    for b in chosen:
        if b not in BASELINES:
            raise UsageError(f"--baselines: unknown baseline {b!r}; choose from {', '.join(BASELINES)}")
        if device == "cpu" and b in CUDA_ONLY_BASELINES:
            raise UsageError(f"--baselines: {b} needs a GPU (--device cuda); on the CPU: eager, compile")
    if not chosen:
        raise UsageError("--baselines is empty")
    return list(dict.fromkeys(chosen))


def _device(requested: str | None, report_only: bool) -> str:
    from cudal1.harness.pool import probe_cuda_devices

    if requested == "cpu" or (report_only and requested is not None):  # a report of a GPU run needs no GPU
        return requested
    found = bool(probe_cuda_devices())
    if requested == "cuda" and not found:
        raise UsageError("--device cuda given but no CUDA GPU is visible")
    return "cuda" if found else "cpu"


def _peaks(out: Path, device: str, skip: bool) -> Any:
    from cudal1.harness.roofline import DevicePeaks, measure_device_peaks

    f = out / "device.json"
    if f.exists():
        peaks = DevicePeaks.from_dict(json.loads(f.read_text()))
        if peaks.device == device:
            return peaks
    if skip:
        return None
    try:
        peaks = measure_device_peaks(device)
    except RuntimeError as e:
        print(f"evaluate: no roofline: {e}", file=sys.stderr)
        return None
    f.write_text(json.dumps(peaks.to_dict(), indent=1))
    return peaks


def _works(out: Path, tasks: list[Any]) -> dict[str, Any]:
    from cudal1.harness.roofline import TaskWork, task_work

    f = out / "work.json"
    known = json.loads(f.read_text()) if f.exists() else {}
    works = {}
    for t in tasks:
        rec = known.get(t.name)
        works[t.name] = TaskWork(**rec["work"]) if rec and rec.get("hash") == t.hash else task_work(t)
    f.write_text(json.dumps({t.name: {"hash": t.hash, "work": works[t.name].to_dict()} for t in tasks}, indent=1))
    return works


def run(args: argparse.Namespace, argv: list[str]) -> int:
    from cudal1.harness import EvalConfig, EvalPool, ResultStore, StoreError
    from cudal1.harness.report import Entry, build_report, render_markdown
    from cudal1.harness.report_html import render_html
    from cudal1.harness.suite import SuiteError, load_suite
    from cudal1.harness.summary import Progress, format_summary, summarize
    from cudal1.harness.techniques import library_sources

    sets = parse_sets(args.sets)
    try:
        tasks = load_suite(args.suite)
    except SuiteError as e:
        raise UsageError(str(e)) from e
    if args.tasks:
        wanted = [n.strip() for n in args.tasks.split(",") if n.strip()]
        missing = sorted(set(wanted) - {t.name for t in tasks})
        if missing:
            raise UsageError(f"--tasks: suite {args.suite} has no task {', '.join(missing)}")
        tasks = [t for t in tasks if t.name in set(wanted)]
    pairs = {name: set_pairs(sol, tasks) for name, sol in sets}
    device = _device(args.device, args.report_only)
    baselines = _baselines(args.baselines, device)
    pairs_for = {key: set_pairs(sol, tasks)  # (set, baseline) -> pairs looked up instead of the set's own
                 for key, sol in parse_baseline_sets(args.baseline_sets, sets, baselines, args.report_only).items()}
    out = Path(args.out or f"runs/report-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}").expanduser()
    out.mkdir(parents=True, exist_ok=True)
    try:
        store = ResultStore(out / "results.sqlite", read_only=args.report_only)  # a report changes no measured row
    except StoreError as e:
        raise UsageError(str(e)) from e
    try:
        base_cfg = EvalConfig(device=device)
        if args.trials is not None:
            base_cfg = base_cfg.replace(trials=args.trials)
        if args.timeout is not None:
            if args.timeout <= 0:
                raise ValueError("--timeout must be positive")
            base_cfg = base_cfg.replace(compile_timeout_s=args.timeout, run_timeout_s=args.timeout)
        if args.time_budget is not None:
            if args.time_budget <= 0:
                raise ValueError("--time-budget must be positive")
            base_cfg = base_cfg.replace(time_budget_s=args.time_budget)
    except ValueError as e:
        raise UsageError(str(e)) from e

    peaks = _peaks(out, device, args.no_peaks or args.report_only)
    works = _works(out, tasks)
    entries: list[Entry] = []
    libs: dict[str, str] = {}
    not_evaluated: dict[tuple[str, str], int] = {}  # (set, baseline) -> pairs not in the store (--report-only)
    with store:
        for b in baselines:
            cfg = base_cfg.replace(baseline=b)
            pool = None if args.report_only else EvalPool(cfg, keep_warm=True)
            try:
                for name, _sol in sets:
                    ps = pairs_for.get((name, b), pairs[name])
                    if pool is None:
                        found = [(p, store.lookup(p[0], p[1], cfg)) for p in ps]
                        missing = sum(r is None for _, r in found)
                        if missing:
                            not_evaluated[name, b] = missing
                        done = [(p, r) for p, r in found if r is not None]
                    else:
                        print(f"evaluate: {name} against {b}: {len(ps)} tasks on {device}", file=sys.stderr,
                              flush=True)
                        results = pool.map(ps, store=store, run=f"{name}@{b}",
                                           on_result=Progress(len(ps), args.quiet))
                        done = list(zip(ps, results, strict=True))
                    for (task, cand), res in done:
                        if cand.source not in libs:
                            libs[cand.source] = library_sources(cand.source)
                        entries.append(Entry(name, b, task.name, task.level, res, cand.source, task.source,
                                             libs[cand.source]))
            finally:
                if pool is not None:
                    pool.close()
        stored_elsewhere = sum(len(store.results(run=f"{n}@{b}")) for n, _ in sets for b in baselines)
    if not entries:
        hint = " (run without --report-only to evaluate them)" if args.report_only else ""
        if stored_elsewhere:
            hint = (f": it holds {stored_elsewhere} results of these sets measured with other settings; give the "
                    "same --device, --trials, --timeout and --time-budget as the run that evaluated them")
        raise UsageError(f"nothing to report: the store {out / 'results.sqlite'} holds no result of these sets{hint}")
    meta = {"command": "apps/evaluate.py " + shlex.join(argv), "suite": args.suite,
            "sets": ", ".join(f"{n}={s}" for n, s in sets)}
    if not_evaluated:
        left = ", ".join(f"{n} / {b}: {v} of {len(pairs_for.get((n, b), pairs[n]))} tasks"
                         for (n, b), v in not_evaluated.items())
        meta["not evaluated yet (left out of every figure)"] = left
        print(f"evaluate: not in the store yet, left out of the report: {left}", file=sys.stderr)
    report = build_report(entries, works=works, peaks=peaks, title=args.title, set_order=[n for n, _ in sets],
                          meta=meta)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    (out / "report.md").write_text(render_markdown(report))
    (out / "report.html").write_text(render_html(report))
    for name, _ in sets:
        for b in baselines:
            mine = [e.result for e in entries if e.set == name and e.baseline == b]
            if mine:
                print(f"\n== {name} against {b} ==")
                print(format_summary(summarize(mine)))
    print(f"\nreport: {out / 'report.html'} and {out / 'report.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return run(build_parser().parse_args(argv), argv)
    except UsageError as e:
        print(f"evaluate: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evaluate: interrupted; measured results are in the store (rerun with the same --out to resume)",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
