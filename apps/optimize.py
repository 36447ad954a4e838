"""Fixed-parameter contrastive search: no training; rounds of (exemplars from the results store ->
contrastive prompt -> the backend writes k candidates per task -> the harness measures them -> store),
keeping per task the fastest ModelNew that really improves (verified, not a copy of the reference, speedup
interval above 1).

    uv run apps/optimize.py --suite builtin:level1 --tasks relu,softmax --rounds 3 -k 4
    uv run apps/optimize.py --task my_task.py --backend openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-7B-Instruct
    uv run apps/optimize.py --module my_net.py:Net --inputs example_inputs --device cpu --size BATCH=8
    uv run apps/optimize.py --out runs/optimize-20261122-170000 --rounds 5      # resume: rounds 3..5 run

Writes --out (default runs/optimize-<UTC time>): results.sqlite, best/<task>.py, best.json, history.jsonl,
state.json. Rerunning with the same --out continues after the last completed round. Exit 2 with one line on
stderr for bad arguments, or when --out holds a search of other tasks/baseline/device/backend (see --force).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import re
import sys
from pathlib import Path

PROG = "optimize"


class UsageError(Exception):
    """A bad argument: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from cudal1.harness import BASELINES

    p = _Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_argument_group("tasks (combine freely; names must be unique)")
    src.add_argument("--suite", help="builtin | builtin:levelN | kernelbench:PATH | dir:PATH")
    src.add_argument("--tasks", metavar="A,B", help="only these tasks of --suite")
    src.add_argument("--task", action="append", default=[], metavar="FILE.py",
                     help="a KernelBench-format task file (Model, get_inputs, get_init_inputs); repeatable")
    src.add_argument("--module", action="append", default=[], metavar="FILE.py:CLASS",
                     help="your own nn.Module CLASS in FILE.py, with a function returning example inputs; repeatable")
    src.add_argument("--inputs", default="get_inputs", metavar="NAME",
                     help="--module: the function returning a list of example inputs (default get_inputs)")
    src.add_argument("--init-inputs", metavar="NAME",
                     help="--module: the function returning the constructor's arguments (default get_init_inputs "
                          "when defined, else no arguments)")
    src.add_argument("--size", action="append", default=[], metavar="[TASK:]NAME=VALUE",
                     help="set a module-level size constant (e.g. BATCH=8) of every task defining it, or of TASK; "
                          "repeatable (shrinks GPU-sized tasks for a CPU run)")
    gen = p.add_argument_group("generation")
    gen.add_argument("--backend", default="embedded",
                     help="embedded | hf:NAME_OR_PATH | openai:BASE_URL#MODEL | vllm:MODEL (default embedded)")
    gen.add_argument("--rounds", type=int, default=2, help="rounds in all (default 2)")
    gen.add_argument("-k", "--candidates", type=int, default=4, help="completions per task and round (default 4)")
    gen.add_argument("--exemplars", type=int, default=2, help="earlier solutions shown per prompt (default 2)")
    gen.add_argument("--max-new-tokens", type=int,
                     help="tokens per completion (default 2048; 512 for the embedded 135M policy, which runs on the "
                          "CPU and seldom writes more that parses)")
    gen.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (default 0.8)")
    gen.add_argument("--prompt-tokens", type=int, default=3072, help="prompt budget in tokens (default 3072)")
    gen.add_argument("--seed", type=int, default=0, help="seed of sampling and exemplar draws (default 0)")
    gen.add_argument("--menu", metavar="OPS", nargs="?", const="all",
                     help="the zoo action space: every prompt carries the kernel zoo's op menu (all ops, or the "
                          "comma-separated OPS) and the policy composes them; default: free-form code")
    ev = p.add_argument_group("evaluation")
    ev.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when a GPU is visible, else cpu")
    ev.add_argument("--baseline", choices=BASELINES, default="eager", help="how the reference is timed")
    ev.add_argument("--trials", type=int, help="correctness trials per candidate (default 5)")
    ev.add_argument("--time-budget", type=float, metavar="S",
                    help="seconds of timed work per measurement attempt (default 1.5)")
    ev.add_argument("--timeout", type=float, metavar="S",
                    help="time limit in seconds for loading and for running each candidate (default 300)")
    ev.add_argument("--ray-address", help="evaluate on Ray actors (auto, ray://HOST:10001, or local)")
    out = p.add_argument_group("output")
    out.add_argument("--out", metavar="DIR", help="output folder (default runs/optimize-<UTC time>); an existing one "
                                                  "is resumed")
    out.add_argument("--force", action="store_true",
                     help="continue --out even if its tasks, baseline, device or backend differ")
    return p


def parse_sizes(specs: list[str]) -> list[tuple[str | None, str, int | float]]:
    """``[TASK:]NAME=VALUE`` -> (task or None, NAME, number)."""
    out = []
    for spec in specs:
        m = re.fullmatch(r"(?:([^:=\s]+):)?([A-Za-z_]\w*)=(\S+)", spec.strip())
        if not m:
            raise UsageError(f"--size {spec!r}: use NAME=VALUE or TASK:NAME=VALUE, e.g. BATCH=8")
        try:
            value: int | float = int(m.group(3))
        except ValueError:
            try:
                value = float(m.group(3))
            except ValueError:
                raise UsageError(f"--size {spec!r}: {m.group(3)!r} is not a number") from None
        out.append((m.group(1), m.group(2), value))
    return out


def load_tasks(args: argparse.Namespace) -> list:
    """The tasks the arguments name, resized by --size."""
    from cudal1.harness import SuiteError, load_suite_report
    from cudal1.harness.suite import TaskProblem, read_task_file, task_from_module
    from cudal1.policy.tasks import resized_task

    if args.tasks and not args.suite:
        raise UsageError("--tasks selects tasks of a --suite; give --suite too")
    if not (args.suite or args.task or args.module):
        raise UsageError("no tasks: give --suite SPEC [--tasks A,B], --task FILE.py or --module FILE.py:CLASS")
    tasks = []
    try:
        if args.suite:
            load = load_suite_report(args.suite)
            chosen = load.tasks
            if args.tasks:
                wanted = [n.strip() for n in args.tasks.split(",") if n.strip()]
                names = {t.name for t in load.tasks}
                missing = [n for n in wanted if n not in names]
                if missing:
                    raise UsageError(f"--tasks: suite {args.suite} has no task {', '.join(missing)} "
                                     f"(list them: uv run cudal1-eval --suite {args.suite} --list)")
                chosen = [t for t in load.tasks if t.name in set(wanted)]
            if not chosen:
                raise UsageError(f"suite {args.suite} has no usable tasks")
            tasks += chosen
        for f in args.task:
            item = read_task_file(Path(f).expanduser(), level=None, suite=f"file:{f}")
            if isinstance(item, TaskProblem):
                raise UsageError(f"--task {f}: {item.reason}")
            tasks.append(item)
        for spec in args.module:
            path, sep, cls = spec.rpartition(":")
            if not sep or not path or not cls.isidentifier():
                raise UsageError(f"--module {spec!r}: use FILE.py:CLASS (the nn.Module class to optimize)")
            tasks.append(task_from_module(path, cls, inputs_fn=args.inputs, init_inputs_fn=args.init_inputs))
    except SuiteError as e:
        raise UsageError(str(e)) from e
    sizes = parse_sizes(args.size)
    names = {t.name for t in tasks}
    for task_name, const, _ in sizes:
        if task_name is not None and task_name not in names:
            raise UsageError(f"--size {task_name}:{const}: no task {task_name} (tasks: {', '.join(sorted(names))})")
        has = [t.name for t in tasks if (task_name in (None, t.name)) and re.search(rf"^{const}\s*=", t.source, re.M)]
        if not has:
            raise UsageError(f"--size {const}: no {'task' if task_name is None else 'task ' + task_name} defines a "
                             f"module-level {const}")
    out = []
    for t in tasks:
        mine = {c: v for tn, c, v in sizes if tn in (None, t.name) and re.search(rf"^{c}\s*=", t.source, re.M)}
        out.append(resized_task(t, mine))
    return out


def _device(requested: str | None) -> str:
    from cudal1.harness.pool import probe_cuda_devices

    if requested is None:
        return "cuda" if probe_cuda_devices() else "cpu"
    if requested == "cuda" and not probe_cuda_devices():
        raise UsageError("--device cuda given but no CUDA GPU is visible")
    return requested


def _menu(spec: str | None) -> str:
    """The op menu's text for ``--menu`` (empty without it). MenuError (a ValueError) for an unknown op."""
    if spec is None:
        return ""
    from cudal1.policy.action_space import menu_text
    from cudal1.policy.recipe import ActionSpaceSection

    ops = [] if spec == "all" else [o.strip() for o in spec.split(",") if o.strip()]
    return menu_text(ActionSpaceSection(name="zoo", ops=ops))


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    from cudal1.harness import EvalConfig
    from cudal1.policy.backends import BackendError, backend_name, make_backend
    from cudal1.policy.search import ContrastiveSearch, SearchConfig

    max_new = args.max_new_tokens
    if max_new is None:
        max_new = 512 if args.backend.strip() == "embedded" else 2048
    try:
        config = SearchConfig(rounds=args.rounds, candidates=args.candidates, exemplars=args.exemplars,
                              max_new_tokens=max_new, temperature=args.temperature, seed=args.seed,
                              prompt_tokens=args.prompt_tokens, menu=_menu(args.menu))
        name = backend_name(args.backend)
        for opt, v in (("--timeout", args.timeout), ("--time-budget", args.time_budget)):
            if v is not None and not v > 0:
                raise ValueError(f"{opt} must be a positive number of seconds, got {v}")
    except ValueError as e:
        raise UsageError(str(e)) from e
    tasks = load_tasks(args)
    device = _device(args.device)
    try:
        cfg = EvalConfig(device=device, baseline=args.baseline)
        if args.trials is not None:
            cfg = cfg.replace(trials=args.trials)
        if args.time_budget is not None:
            cfg = cfg.replace(time_budget_s=args.time_budget)
        if args.timeout is not None:
            cfg = cfg.replace(compile_timeout_s=args.timeout, run_timeout_s=args.timeout)
        out = Path(args.out or Path("runs") / f"optimize-{_dt.datetime.now(_dt.timezone.utc):%Y%m%d-%H%M%S}")
        search = ContrastiveSearch(tasks, out, backend_name=name, config=config, eval_config=cfg, force=args.force)
    except ValueError as e:  # bad trials/baseline for the device, SearchStateError, bad task names
        raise UsageError(str(e)) from e
    todo = (f"rounds {search.rounds_done + 1}..{config.rounds} of {config.rounds}"
            if search.rounds_done < config.rounds else f"all {config.rounds} rounds done already")
    print(f"{PROG}: {len(tasks)} task(s) on {device} (baseline {cfg.baseline}), backend {name}, {todo}, "
          f"k={config.candidates} -> {out}", flush=True)
    try:
        backend = make_backend(args.backend)
        search.check_backend(backend)  # a task whose prompt alone exceeds --prompt-tokens
    except (BackendError, FileNotFoundError, ValueError) as e:  # vLLM not installed, embedded weights missing ...
        raise UsageError(str(e)) from e
    summary = search.run(backend, ray_address=args.ray_address, log=lambda s: print(s, flush=True))
    width = max(len(t.name) for t in tasks)
    print(f"\n{'task':<{width}}  {'best':>8}  round  source")
    for t in tasks:
        b = summary.best.get(t.name)
        if b:
            print(f"{t.name:<{width}}  {b['speedup']:>7.2f}x  {b['round'] if b['round'] is not None else '-':>5}  "
                  f"{out / b['file']}")
        else:
            print(f"{t.name:<{width}}  {'-':>8}  {'-':>5}  no verified candidate yet")
    print(f"\nrounds done: {summary.rounds_done}; history {out / 'history.jsonl'}; results {out / 'results.sqlite'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; measured results are kept: rerun with the same --out to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
