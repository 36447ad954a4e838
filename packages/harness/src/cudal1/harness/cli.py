"""``cudal1-eval``: evaluate solutions (or each task's own reference) over a suite.

    cudal1-eval --suite builtin --list
    cudal1-eval --suite builtin:level1 --solutions my_kernels/ --device cuda --json out.json --store run.sqlite

Exit codes: 0 when the run completed (bad candidates are results, not errors); 2 for bad arguments, a
missing path, an unusable store or JSON path (checked before the first pair), no GPU where one was asked
for, or ``--require-sandbox`` where no OS sandbox can be made (one line on stderr); 3 when the run completed
but a task itself could not be used (a file that does not parse or lacks ``Model``, a task whose reference
fails to load or run: ``task_error``, never blamed on a candidate); 130 / 143 on SIGINT / SIGTERM (every
worker is killed and its folder removed; results already stored are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as _dt
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from .config import BASELINES, EvalConfig
from .solutions import SolutionSetError, load_solutions, uncovered_note
from .store import ResultStore, StoreError
from .suite import SuiteError, load_suite_report, reference_candidate
from .summary import Progress, format_summary, summarize
from .types import Task


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
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run where candidates cannot be put in an OS sandbox (bubblewrap namespaces)")
    p.add_argument("--lanes-per-gpu", type=int, default=1, metavar="N",
                   help="lanes on each GPU (default 1): they overlap all but timing, each timing has the GPU alone")
    p.add_argument("--cpus-per-lane", type=int, default=2, metavar="N", help="CPU cores pinned to each GPU lane")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


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
        check_json_path(Path(args.json).expanduser())
    if args.list:
        for t in load.tasks:
            print(t.name)
        return 0
    if args.check_suite:
        code = _check_suite(args, load.tasks)
        return 3 if load.problems else code
    if args.solutions:
        try:
            pairs, unknown = load_solutions(args.solutions, load.tasks)
        except SolutionSetError as e:
            raise UsageError(str(e)) from e
        for name in unknown:
            print(f"cudal1-eval: {name} matches no task of suite {args.suite}; ignored", file=sys.stderr)
        if not pairs:
            raise UsageError(f"no file in {args.solutions} is named after a task of suite {args.suite}")
        note = uncovered_note(args.solutions, load.tasks, pairs)
        if note:
            print(f"cudal1-eval: {note}", file=sys.stderr)
    else:
        pairs = [(t, reference_candidate(t)) for t in load.tasks]
    if not pairs:
        raise UsageError(f"suite {args.suite} has no usable tasks")

    from .pool import EvalPool, SandboxUnavailable

    device = _resolve_device(args.device)
    try:
        cfg = EvalConfig(device=device, baseline=args.baseline)
        if args.timeout is not None:
            if args.timeout <= 0:
                raise ValueError("--timeout must be positive")
            cfg = cfg.replace(compile_timeout_s=args.timeout, run_timeout_s=args.timeout)
        if args.trials is not None:
            cfg = cfg.replace(trials=args.trials)
        if args.require_sandbox:
            cfg = cfg.replace(require_sandbox=True)
    except ValueError as e:
        raise UsageError(str(e)) from e
    store = None
    if args.store:
        try:
            store = ResultStore(Path(args.store).expanduser())
            store.check_writable()
        except StoreError as e:
            raise UsageError(str(e)) from e
    run = args.run or _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    try:
        pool = EvalPool(cfg, hide=[args.json] if args.json else (), lanes_per_gpu=args.lanes_per_gpu,
                        cpus_per_lane=args.cpus_per_lane)
    except SandboxUnavailable as e:
        raise UsageError(f"{e} (--require-sandbox)") from e
    except ValueError as e:
        raise UsageError(f"--lanes-per-gpu / --cpus-per-lane: {e}") from e
    if not args.quiet:
        print(f"cudal1-eval: {len(pairs)} tasks from {args.suite} on {device}, baseline {cfg.baseline}, "
              f"{'sandboxed (bubblewrap)' if pool.sandboxed else 'UNSANDBOXED: ' + pool.sandbox_info.reason}",
              file=sys.stderr)
    with stop_on_signals(pool):
        results = pool.map(pairs, store=store, run=run, on_result=Progress(len(pairs), args.quiet))
    if store is not None:
        store.close()
    if args.json:
        write_json(Path(args.json).expanduser(), [r.to_dict() for r in results])
    print(format_summary(summarize(results)))
    bad_tasks = sorted({r.task for r in results if r.status == "task_error"})
    for name in bad_tasks:
        print(f"cudal1-eval: task {name} could not be used (task_error); see its record", file=sys.stderr)
    return 3 if bad_tasks or load.problems else 0


def check_json_path(p: Path) -> None:
    """Before the first pair: the JSON file's folder exists and is writable, the file (if any) is a writable file."""
    if not p.parent.is_dir():
        raise UsageError(f"folder of --json file {p.parent} does not exist")
    if p.exists() and (not p.is_file() or not os.access(p, os.W_OK)):
        raise UsageError(f"--json {p} exists and is not a writable file")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cudal1-", dir=p.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"cannot write into the folder of --json file {p.parent}: {e.strerror}") from e


def write_json(p: Path, records: list) -> None:
    """Write the records atomically (a temporary file in the same folder, then renamed over ``p``)."""
    fd, tmp = tempfile.mkstemp(prefix=".cudal1-", suffix=".json", dir=p.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(records, f, indent=1, default=str)
    os.replace(tmp, p)


class _Stopped(BaseException):
    """SIGTERM (or SIGINT) arrived: unwind, killing every worker."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals(pool: Any):
    """While evaluating: SIGINT and SIGTERM stop the pool (no further result is stored), kill every worker
    and remove its folder; results already stored are kept."""
    def handler(signum: int, _frame: Any) -> None:
        raise _Stopped(signum)

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    except (_Stopped, KeyboardInterrupt) as e:
        pool.stop()
        signum = e.signum if isinstance(e, _Stopped) else signal.SIGINT
        raise _Interrupted(128 + int(signum)) from None
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


class _Interrupted(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


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
        extra = [*rec["findings"], *(f"note: {n}" for n in rec.get("notes", [])),
                 *(["stateful reference (compared from identical state)"] if rec.get("stateful") else [])]
        print(f"{rec['task']:<40} {rec['status']:<11} {'; '.join(extra)}", flush=True)

    pool = EvalPool(cfg)
    with stop_on_signals(pool):
        recs = pool.check_tasks(tasks, on_result=show)
    bad = [r for r in recs if r["status"] != "ok"]
    print(f"{len(recs)} tasks checked on {cfg.device}: {len(recs) - len(bad)} ok, "
          f"{sum(r['status'] == 'degenerate' for r in recs)} degenerate, {sum(r['status'] == 'task_error' for r in recs)} "
          f"failed to run; {sum(bool(r.get('notes')) for r in recs)} with notes, "
          f"{sum(bool(r.get('stateful')) for r in recs)} stateful")
    if args.json:
        write_json(Path(args.json).expanduser(), recs)
    return 3 if any(r["status"] == "task_error" for r in recs) else 0


def main(argv: list[str] | None = None) -> int:
    try:
        code = _run(argv)
    except UsageError as e:
        print(f"cudal1-eval: error: {e}", file=sys.stderr)
        code = 2
    except (KeyboardInterrupt, _Interrupted) as e:
        print("cudal1-eval: interrupted; every worker was stopped; results already stored are kept (rerun with the "
              "same --store to resume)", file=sys.stderr)
        code = e.code if isinstance(e, _Interrupted) else 130
    except BrokenPipeError:  # `cudal1-eval --list | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    if __name__ == "__main__" or argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
