"""Compile every Triton kernel specialisation the ``kernelbench-v0`` solutions use, for its architecture family,
without a GPU.

    python -m cudal1.kernelzoo.compile_manifest                 # the committed manifest, every family; exit 1 on failure
    python -m cudal1.kernelzoo.compile_manifest M.json --family sm86 --jobs 2 --json outcomes.json --strict

The manifest (:mod:`cudal1.kernelzoo.triton_manifest`) holds what a GPU run recorded: each kernel, its signature
types, constexpr values, argument attributes and compile options, per family (the GPU run forces each family's
launch-config table with ``$CUDAL1_ARCH``). Each entry is compiled here exactly as
:mod:`cudal1.kernelzoo.compile_targets` compiles the zoo's ops, with Triton's ``ASTSource`` and ``GPUTarget("cuda",
cc, 32)`` for its family, and then held to what that family's GPUs give one block: Triton compiles a kernel that
needs more shared memory than the target has and refuses it only when it is loaded (``OutOfResources``), so a tile
that fits sm90's 227 KB but not an RTX 3090's or an L40's 99 KB is caught by comparing the compiled kernel's
``shared`` with :data:`MAX_SHARED_BYTES`. A family without a recorded pass gets the entries of the newest recorded
family (the launch configs of an sm90 pass, say), and the output says so.

Time: one CPU compile per kernel and family (an elementwise or reduction kernel compiles faster than a ``tl.dot``
kernel), plus importing torch once per process (benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md);
``--jobs`` compiles in parallel, ``--family`` limits the families and ``--one-per-config`` compiles one of the
entries that differ only in divisibility attributes.

Must run without ``TRITON_INTERPRET`` (the interpreter replaces kernels by Python functions): :func:`main` drops
it. Compiles are cached by Triton on disk (``$TRITON_CACHE_DIR``, default ``~/.triton/cache``), so a second run
costs little.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .arch import CAPABILITY, MAX_SHARED_BYTES
from .compile_targets import compile_for
from .triton_manifest import (
    MANIFEST,
    PACKAGE_DIR,
    Entry,
    Manifest,
    code_sha256,
    decode_signature,
    decode_value,
)

__all__ = ["MAX_SHARED_BYTES", "KernelResolver", "Outcome", "compile_entry", "compile_manifest", "locate", "main",
           "plan", "stale"]

_SOLUTIONS = "kernelbench_v0"


@dataclass(frozen=True)
class Outcome:
    """One entry compiled for one family.

    recorded_for: the family whose pass recorded the entry (differs from ``family`` only for a family without a
        recorded pass). shared_bytes / limit_bytes: the compiled kernel's shared memory and the family's maximum.
    """

    kernel: str
    family: str
    recorded_for: str
    label: str
    ok: bool
    cubin_bytes: int = 0
    shared_bytes: int | None = None
    limit_bytes: int = 0
    seconds: float = 0.0
    error: str = ""
    used_by: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for a person: what was compiled for which family and what came out."""
        if self.ok:
            return (f"ok      {self.family}  {self.label}: cubin {self.cubin_bytes} B, shared {self.shared_bytes} "
                    f"of {self.limit_bytes} B, {self.seconds:.1f} s")
        users = ", ".join(Path(u).stem for u in self.used_by[:3]) + (" ..." if len(self.used_by) > 3 else "")
        return f"FAILED  {self.family}  {self.label} (used by {users or '?'}): {self.error}"


def locate(file: str) -> Path:
    """The file a manifest path names: relative to the kernelzoo package folder unless absolute. A solution file
    that moved between ``kernelbench_v0/pending/`` and ``kernelbench_v0/`` (a pending solution released) is found
    under its new folder.

    Raises:
        FileNotFoundError: neither exists.
    """
    path = Path(file) if Path(file).is_absolute() else PACKAGE_DIR / file
    if path.is_file():
        return path
    moved = _moved(file)
    if moved is not None and (PACKAGE_DIR / moved).is_file():
        return PACKAGE_DIR / moved
    raise FileNotFoundError(f"{file} is not in the kernel zoo any more: record the manifest again "
                            f"(benchmarks/scripts/kb_triton_manifest.py on a GPU)")


def _moved(file: str) -> str | None:
    """A solution file's path in the other folder (``pending/`` <-> the set), else None."""
    parts = Path(file).parts
    if parts[:2] == (_SOLUTIONS, "pending") and len(parts) == 3:
        return f"{_SOLUTIONS}/{parts[2]}"
    if parts[:1] == (_SOLUTIONS,) and len(parts) == 2:
        return f"{_SOLUTIONS}/pending/{parts[1]}"
    return None


class KernelResolver:
    """Kernel id -> the ``@triton.jit`` function, importing modules and loading solution files (by path, each once)."""

    def __init__(self, manifest: Manifest) -> None:
        self.kernels = manifest.kernels
        self._files: dict[str, ModuleType] = {}

    def module(self, file: str) -> ModuleType:
        """A solution file executed as its own module (registered in ``sys.modules``, as Triton needs)."""
        if file not in self._files:
            path = locate(file)
            name = "cudal1_manifest_" + re.sub(r"\W", "_", str(Path(file).with_suffix("")))
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
                raise ImportError(f"cannot load {path}")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            self._files[file] = mod
        return self._files[file]

    def __call__(self, kernel_id: str) -> Any:
        ref = self.kernels[kernel_id]
        obj: Any = importlib.import_module(ref.module) if ref.module else self.module(ref.file or "")
        for part in ref.qualname.split("."):
            obj = getattr(obj, part)
        if not hasattr(obj, "arg_names"):
            raise TypeError(f"{kernel_id} is a {type(obj).__name__}, not a Triton JIT function (is TRITON_INTERPRET "
                            f"set? unset it: the interpreter replaces kernels by Python functions)")
        return obj


def compile_entry(fn: Any, entry: Entry, family: str, resolve: KernelResolver | Any) -> Outcome:
    """Compile ``entry`` of kernel ``fn`` for ``family`` (``resolve`` gives ``@triton.jit`` functions that are
    constexpr values) and check its shared memory against :data:`MAX_SHARED_BYTES`; never raises."""
    base = {"kernel": entry.kernel, "family": family, "recorded_for": entry.family, "label": entry.label,
            "limit_bytes": MAX_SHARED_BYTES[family], "used_by": entry.used_by}
    t0 = time.perf_counter()
    if entry.problems:
        return Outcome(**base, ok=False, error="cannot be replayed exactly: " + "; ".join(entry.problems))
    try:
        consts = {tuple(path): decode_value(v, resolve) for path, v in entry.constexprs}
        attrs = {tuple(path): [list(a) for a in v] for path, v in entry.attrs}
        k = compile_for(fn, decode_signature(entry.signature), consts, family, dict(entry.options), attrs)
    except Exception as e:  # noqa: BLE001 - any compiler error is the finding
        return Outcome(**base, ok=False, seconds=time.perf_counter() - t0, error=_short(e))
    shared = int(k.metadata.shared)
    fits = shared <= MAX_SHARED_BYTES[family]
    error = "" if fits else (f"needs {shared} B of shared memory per block; {family} GPUs allow "
                             f"{MAX_SHARED_BYTES[family]} B (Triton would raise OutOfResources at launch): give "
                             f"{family} a smaller tile or fewer stages")
    return Outcome(**base, ok=fits, cubin_bytes=len(k.asm["cubin"]), shared_bytes=shared,
                   seconds=time.perf_counter() - t0, error=error)


def _short(e: BaseException, limit: int = 700) -> str:
    """An exception as one short paragraph: its type and the end of its message (Triton's are long)."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text if len(text) <= limit else '...' + text[-limit:]}"


def plan(manifest: Manifest, families: list[str] | None = None, one_per_config: bool = False
         ) -> tuple[list[tuple[int, str]], list[str]]:
    """(entry index, family) for every compile to run, and notes on families compiled from another's pass.

    A family recorded in the manifest gets its own entries; one that is not gets the entries of the newest recorded
    family. ``one_per_config``: of entries that differ only in argument attributes (which pointers and integers
    were divisible by 16: vector widths, not tile sizes, stages or types), compile one, to bound the time."""
    families = list(families or CAPABILITY)
    recorded = [f for f in CAPABILITY if f in set(manifest.families)]
    tasks, notes = [], []
    for family in families:
        source = family if family in recorded else (recorded[-1] if recorded else None)
        if source is None:
            continue
        if source != family:
            notes.append(f"{family}: no pass recorded; compiling the {source} pass's entries for it")
        seen: set[str] = set()
        for i, e in enumerate(manifest.entries):
            if e.family != source:
                continue
            key = json.dumps([e.kernel, e.signature, e.constexprs, e.options], sort_keys=True)
            if one_per_config and key in seen:
                continue
            seen.add(key)
            tasks.append((i, family))
    if one_per_config:
        notes.append(f"one entry per kernel config: {len(tasks)} compiles")
    return tasks, notes


_WORKER: dict[str, Any] = {}


def _init_worker(manifest_json: dict[str, Any]) -> None:
    os.environ.pop("TRITON_INTERPRET", None)
    manifest = Manifest.from_json(manifest_json)
    _WORKER.update(manifest=manifest, resolve=KernelResolver(manifest))


def _run_task(task: tuple[int, str]) -> Outcome:
    index, family = task
    manifest, resolve = _WORKER["manifest"], _WORKER["resolve"]
    entry = manifest.entries[index]
    try:
        fn = resolve(entry.kernel)
    except Exception as e:  # noqa: BLE001 - a kernel that cannot be found is a finding, reported like a failure
        return Outcome(kernel=entry.kernel, family=family, recorded_for=entry.family, label=entry.label, ok=False,
                       limit_bytes=MAX_SHARED_BYTES[family], error=f"cannot load the kernel: {_short(e)}",
                       used_by=entry.used_by)
    return compile_entry(fn, entry, family, resolve)


def compile_manifest(manifest: Manifest, families: list[str] | None = None, jobs: int = 1,
                     progress: Any = None, one_per_config: bool = False) -> list[Outcome]:
    """Compile every planned (entry, family) of ``manifest`` (see :func:`plan`) in ``jobs`` processes; one
    :class:`Outcome` each, in plan order. ``progress(outcome)`` is called as each one finishes."""
    tasks, _ = plan(manifest, families, one_per_config)
    if jobs <= 1:
        _init_worker(manifest.to_json())
        outcomes = []
        for t in tasks:
            outcomes.append(_run_task(t))
            if progress:
                progress(outcomes[-1])
        return outcomes
    # tasks of one kernel next to each other, so that a worker loads few solution files
    order = sorted(range(len(tasks)), key=lambda i: (manifest.entries[tasks[i][0]].kernel, tasks[i][1]))
    results: dict[int, Outcome] = {}
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                initargs=(manifest.to_json(),)) as pool:
        futures = {pool.submit(_run_task, tasks[i]): i for i in order}
        for fut in cf.as_completed(futures):
            try:
                results[futures[fut]] = fut.result()
            except Exception as e:  # noqa: BLE001 - a compiler that kills its process (BrokenProcessPool)
                index, family = tasks[futures[fut]]
                entry = manifest.entries[index]
                results[futures[fut]] = Outcome(kernel=entry.kernel, family=family, recorded_for=entry.family,
                                                label=entry.label, ok=False, limit_bytes=MAX_SHARED_BYTES[family],
                                                error=f"the compile process failed: {_short(e)}",
                                                used_by=entry.used_by)
            if progress:
                progress(results[futures[fut]])
    return [results[i] for i in range(len(tasks))]


def stale(manifest: Manifest) -> list[str]:
    """Why ``manifest`` no longer describes the code (empty when it does): families without a pass, files whose
    code changed since the recording, solution files it never ran, solution runs that did not finish ``ok``."""
    from .solutions import KERNELBENCH_V0

    out = [f"{f}: no pass recorded" for f in CAPABILITY if f not in manifest.runs]
    for file, digest in sorted(manifest.files.items()):
        try:
            path = locate(file)
        except FileNotFoundError:
            out.append(f"{file}: gone")
            continue
        if code_sha256(path) != digest:
            out.append(f"{file}: code changed since the recording")
    recorded = {s for runs in manifest.runs.values() for s in runs}
    for path in sorted([*KERNELBENCH_V0.glob("*.py"), *(KERNELBENCH_V0 / "pending").glob("*.py")]):
        rel = path.relative_to(PACKAGE_DIR).as_posix()
        if rel not in recorded and _moved(rel) not in recorded:
            out.append(f"{rel}: not in the manifest")
    for family, runs in sorted(manifest.runs.items()):
        out += [f"{family} {s}: {r.status}: {r.error}" for s, r in sorted(runs.items()) if r.status != "ok"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cudal1.kernelzoo.compile_manifest", description=__doc__.split("\n")[0])
    ap.add_argument("manifest", nargs="?", type=Path, default=MANIFEST, help="manifest JSON (default: the committed one)")
    ap.add_argument("--family", action="append", choices=list(CAPABILITY), help="only these families (repeatable)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compile processes (default: CPU count)")
    ap.add_argument("--json", type=Path, help="write every outcome here as JSON")
    ap.add_argument("--strict", action="store_true", help="also fail when the manifest is stale (see stale())")
    ap.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    ap.add_argument("--one-per-config", action="store_true",
                    help="compile one of the entries that differ only in divisibility attributes (faster)")
    ap.add_argument("--prune-gone", action="store_true",
                    help="rewrite the manifest without the files that no longer exist (a solution removed after "
                         "the recording) and exit")
    args = ap.parse_args(argv)
    os.environ.pop("TRITON_INTERPRET", None)
    if not args.manifest.is_file():
        print(f"no manifest at {args.manifest}: record one with benchmarks/scripts/kb_triton_manifest.py on a GPU",
              file=sys.stderr)
        return 2
    manifest = Manifest.read(args.manifest)
    if args.prune_gone:
        gone = {p.split(": ")[0] for p in stale(manifest) if p.endswith(": gone")}
        pruned = manifest.without(gone)
        pruned.write(args.manifest)
        print(f"pruned {len(gone)} files: {len(manifest.entries) - len(pruned.entries)} entries, "
              f"{len(manifest.kernels) - len(pruned.kernels)} kernels")
        return 0
    _, notes = plan(manifest, args.family, args.one_per_config)
    for note in notes:
        print(f"note: {note}")
    t0 = time.perf_counter()
    outcomes = compile_manifest(manifest, args.family, args.jobs,
                                progress=lambda o: (args.quiet and o.ok) or print(o.line(), flush=True),
                                one_per_config=args.one_per_config)
    failed = [o for o in outcomes if not o.ok]
    problems = stale(manifest)
    print(f"{len(outcomes) - len(failed)} of {len(outcomes)} compiles ok ({len(manifest.entries)} entries, "
          f"{len(manifest.kernels)} kernels) in {time.perf_counter() - t0:.0f} s with {args.jobs} jobs")
    for o in failed:
        print(o.line(), file=sys.stderr)
    shown = problems if args.strict else problems[:5]
    for p in shown:
        print(f"stale: {p}", file=sys.stderr if args.strict else sys.stdout)
    if len(shown) < len(problems):
        print(f"stale: ... {len(problems) - len(shown)} more (--strict lists them all and fails on them)")
    if args.json:
        args.json.write_text(json.dumps({"outcomes": [asdict(o) for o in outcomes], "stale": problems,
                                         "notes": notes}, indent=1) + "\n", encoding="utf-8")
    return 1 if failed or (args.strict and problems) else 0


if __name__ == "__main__":
    sys.exit(main())
