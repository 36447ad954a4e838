"""``cudal1-eval``: evaluate solutions (or each task's own reference) over a suite.

    cudal1-eval --suite builtin --list
    cudal1-eval --suite builtin:level1 --solutions my_kernels/ --device cuda --json out.json --store run.sqlite

Exit codes: 0 when the run completed (bad candidates are results, not errors); 2 for bad arguments, a
missing path, an unusable store, or no GPU where one was asked for (one line on stderr).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import sys
import time
from pathlib import Path

from .config import BASELINES, EvalConfig
from .store import ResultStore, StoreError
from .suite import SuiteError, load_suite_report, reference_candidate
from .summary import format_summary, summarize
from .types import Candidate, EvalResult, Task


class UsageError(Exception):
    """A bad argument: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="cudal1-eval", description="Evaluate candidate kernels against a task suite, honestly.")
    p.add_argument("--suite", required=True, help="builtin | builtin:levelN | kernelbench:PATH | dir:PATH")
    p.add_argument("--tasks", metavar="A,B", help="only these tasks of the suite (comma-separated names)")
    p.add_argument("--list", action="store_true", help="print the suite's task names, one per line, and exit")
    p.add_argument("--check-suite", action="store_true",
                   help="only check the tasks: constant output, output independent of an input or of a weight")
    p.add_argument("--solutions", metavar="DIR|NAME",
                   help="folder of <task name>.py files defining ModelNew, or the name of an installed solution "
                        "set (e.g. kernelzoo); default: each task's own reference")
    p.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when a GPU is visible, else cpu")
    p.add_argument("--baseline", choices=BASELINES, default="eager", help="how the reference is timed")
    p.add_argument("--timeout", type=float, metavar="S", help="time limit in seconds for loading and for running "
                   "each candidate (default 300)")
    p.add_argument("--trials", type=int, help="correctness trials per candidate (default 5)")
    p.add_argument("--json", metavar="FILE", help="write one JSON record per evaluated task")
    p.add_argument("--store", metavar="FILE", help="SQLite results store; finished pairs are not redone")
    p.add_argument("--run", metavar="NAME", help="label of this run in the store (default: a timestamp)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


SOLUTION_SETS = "cudal1.solutions"  # entry-point group: name -> callable returning a folder of <task>.py


def solution_sets() -> dict[str, object]:
    """Installed solution sets by name (entry points of group ``cudal1.solutions``, e.g. ``kernelzoo``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=SOLUTION_SETS)}


def resolve_solutions(spec: str) -> tuple[Path, str]:
    """(folder, origin label) for ``--solutions``: an existing folder, else an installed set's name."""
    d = Path(spec).expanduser()
    if d.is_dir():
        return d, f"solutions:{d}"
    sets = solution_sets()
    if spec in sets:
        folder = Path(sets[spec].load()())  # type: ignore[attr-defined]
        if not folder.is_dir():
            raise UsageError(f"solution set {spec} points at {folder}, which is not a folder; reinstall its package")
        return folder, f"solutions:{spec}"
    known = f"installed sets: {', '.join(sorted(sets))}" if sets else "no solution set is installed"
    raise UsageError(f"--solutions {spec}: the folder {d} does not exist and no installed solution set has that "
                     f"name ({known})")


def load_solutions(folder: str, tasks: list[Task]) -> tuple[list[tuple[Task, Candidate]], list[str]]:
    """Pairs for tasks that have ``<name>.py`` in ``folder`` (or in the installed solution set of that
    name); plus names of files matching no task."""
    d, origin = resolve_solutions(folder)
    by_name = {t.name: t for t in tasks}
    pairs, unknown = [], []
    for f in sorted(d.glob("*.py")):
        task = by_name.get(f.stem)
        if task is None:
            unknown.append(f.name)
            continue
        try:
            src = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            src = f"raise ImportError({('cannot read solution file: ' + str(e))!r})\n"
        pairs.append((task, Candidate(source=src, task=task.name, origin=origin)))
    return pairs, unknown


class Progress:
    """A progress bar line per finished pair on stderr (``[####......]  3/60  12s  name  ok  1.02x``)."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet, self.done, self.t0 = total, quiet, 0, time.monotonic()

    def __call__(self, _i: int, r: EvalResult) -> None:
        self.done += 1
        if self.quiet:
            return
        sp = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        extra = f"  [{', '.join(r.flags)}]" if r.flags else ""
        why = f"  {r.reason[:100]}" if r.status != "ok" else ""
        w = len(str(self.total))
        el = time.monotonic() - self.t0
        filled = round(20 * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (20 - filled)
        print(f"[{bar}] {self.done:>{w}}/{self.total} {el:5.0f}s  {r.task:<36} {r.status:<13} {sp:>7}{extra}{why}",
              file=sys.stderr, flush=True)


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        load = load_suite_report(args.suite)
    except SuiteError as e:
        raise UsageError(str(e)) from e
    for prob in load.problems:
        print(f"cudal1-eval: task {prob.name} skipped: {prob.reason} ({prob.path})", file=sys.stderr)
    if args.tasks:
        wanted = [n.strip() for n in args.tasks.split(",") if n.strip()]
        names = {t.name for t in load.tasks}
        missing = [n for n in wanted if n not in names]
        if missing:
            raise UsageError(f"--tasks: suite {args.suite} has no task {', '.join(missing)} (see --list)")
        load = dataclasses.replace(load, tasks=[t for t in load.tasks if t.name in set(wanted)])
    if args.json:
        jp = Path(args.json).expanduser()
        if not jp.parent.is_dir():
            raise UsageError(f"folder of --json file {jp.parent} does not exist")
    if args.list:
        for t in load.tasks:
            print(t.name)
        return 0
    if args.check_suite:
        return _check_suite(args, load.tasks)
    if args.solutions:
        pairs, unknown = load_solutions(args.solutions, load.tasks)
        for name in unknown:
            print(f"cudal1-eval: {name} matches no task of suite {args.suite}; ignored", file=sys.stderr)
        if not pairs:
            raise UsageError(f"no file in {args.solutions} is named after a task of suite {args.suite}")
    else:
        pairs = [(t, reference_candidate(t)) for t in load.tasks]
    if not pairs:
        raise UsageError(f"suite {args.suite} has no usable tasks")

    from .pool import EvalPool

    device = _resolve_device(args.device)
    try:
        cfg = EvalConfig(device=device, baseline=args.baseline)
        if args.timeout is not None:
            if args.timeout <= 0:
                raise ValueError("--timeout must be positive")
            cfg = cfg.replace(compile_timeout_s=args.timeout, run_timeout_s=args.timeout)
        if args.trials is not None:
            cfg = cfg.replace(trials=args.trials)
    except ValueError as e:
        raise UsageError(str(e)) from e
    store = None
    if args.store:
        try:
            store = ResultStore(Path(args.store).expanduser())
        except StoreError as e:
            raise UsageError(str(e)) from e
    run = args.run or _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    pool = EvalPool(cfg)
    if not args.quiet:
        print(f"cudal1-eval: {len(pairs)} tasks from {args.suite} on {device}, baseline {cfg.baseline}",
              file=sys.stderr)
    results = pool.map(pairs, store=store, run=run, on_result=Progress(len(pairs), args.quiet))
    if store is not None:
        store.close()
    if args.json:
        Path(args.json).expanduser().write_text(json.dumps([r.to_dict() for r in results], indent=1, default=str))
    print(format_summary(summarize(results)))
    return 0


def _resolve_device(requested: str | None) -> str:
    from .pool import probe_cuda_devices

    if requested is None:
        return "cuda" if probe_cuda_devices() else "cpu"
    if requested == "cuda" and not probe_cuda_devices():
        raise UsageError("--device cuda given but no CUDA GPU is visible")
    return requested


def _check_suite(args: argparse.Namespace, tasks: list[Task]) -> int:
    """``--check-suite``: one line per task, then a count; exit 0 (findings are results)."""
    from .pool import EvalPool

    if not tasks:
        raise UsageError(f"suite {args.suite} has no usable tasks")
    cfg = EvalConfig(device=_resolve_device(args.device))
    if args.timeout is not None:
        cfg = cfg.replace(compile_timeout_s=args.timeout, run_timeout_s=args.timeout)

    def show(_i: int, rec: dict) -> None:
        print(f"{rec['task']:<40} {rec['status']:<11} {'; '.join(rec['findings'])}", flush=True)

    recs = EvalPool(cfg).check_tasks(tasks, on_result=show)
    bad = [r for r in recs if r["status"] != "ok"]
    print(f"{len(recs)} tasks checked on {cfg.device}: {len(recs) - len(bad)} ok, "
          f"{sum(r['status'] == 'degenerate' for r in recs)} degenerate, {sum(r['status'] == 'task_error' for r in recs)} "
          "failed to run")
    if args.json:
        Path(args.json).expanduser().write_text(json.dumps(recs, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        code = _run(argv)
    except UsageError as e:
        print(f"cudal1-eval: error: {e}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("cudal1-eval: interrupted; results already stored are kept (rerun with the same --store to resume)",
              file=sys.stderr)
        code = 130
    except BrokenPipeError:  # `cudal1-eval --list | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    if __name__ == "__main__" or argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
