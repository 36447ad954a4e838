"""Record every Triton kernel specialisation that the ``kernelbench-v0`` solutions compile, per architecture family
(issue 18: launch configs tuned on an H100 must still compile for sm80 / sm86 / sm89).

One device call (a GPU; the repository's working tree; KernelBench's task files):

    PYTHONPATH=/tmp/site python3 benchmarks/scripts/kb_triton_manifest.py --kb .carry/kb/kernelbench-v0 \
        --out "$OUT/kb_triton_manifest.json"

Every solution file of the set and of ``pending/`` is built as the harness builds a candidate (the task loaded from a
pristine copy at its original sizes, parameters randomised and shared with the reference by name, ``eval()``,
exact fp32) and called ``--calls`` times under ``torch.no_grad()`` on fresh inputs, while
``triton.knobs.runtime.jit_post_compile_hook`` (:mod:`cudal1.kernelzoo.triton_recorder`) records each compilation:
the kernel (module or solution file,
qualified name), its signature types, constexpr values, argument attributes and compile options, the shared
memory and registers it took. That is done once per family with ``$CUDAL1_ARCH`` forced, so the zoo's per-family
launch-config tables are the ones in use: sm90 first, then the other families in parallel (mostly Triton disk-cache
hits). Solutions run in ``--jobs`` worker processes; one that raises, hangs (``--solution-timeout``) or kills its
process is recorded with its error and the rest go on; at ``--deadline`` what was recorded is written all the same.

Writes the manifest (:mod:`cudal1.kernelzoo.triton_manifest`) to ``--out``; commit it as
``packages/kernelzoo/src/cudal1/kernelzoo/kernelbench_v0/triton_manifest.json``, then
``python -m cudal1.kernelzoo.compile_manifest`` (and tests/kernelzoo/test_triton_manifest.py) compile every entry for
its family on a CPU. Uses the working tree's ``cudal1`` sources (``packages/*/src`` go first on ``sys.path``), so the
solutions recorded are the ones in the tree, whatever wheel is installed.

``--device cpu`` is a dry run of this machinery (the solutions take their PyTorch paths; nothing compiles).

Limits: kernels compiled outside ``JITFunction.run`` (``torch.compile``'s Inductor, a direct ``triton.compile``)
are not seen; a kernel whose launch configs live in a module that is neither the kernel's, a helper's, nor on the
stack at launch is not re-checked for staleness when only that module changes; ``triton.autotune`` (no zoo kernel
uses it; the zoo's own tuner is off here, ``CUDAL1_AUTOTUNE=off``) would record every config it benchmarks.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("sm90", "sm80", "sm86", "sm89")
STARTUP_S = 120.0  # a worker's imports, CUDA context and task loading, before its first solution


def _use_tree() -> None:
    """The working tree's packages first on ``sys.path`` (the namespace package ``cudal1`` then resolves its
    subpackages from the tree before any installed wheel)."""
    for pkg in ("harness", "kernelzoo"):
        src = str(ROOT / "packages" / pkg / "src")
        while src in sys.path:  # an editable install lists it after $PYTHONPATH: move it to the front
            sys.path.remove(src)
        sys.path.insert(0, src)


# ---------------------------------------------------------------------------------------------------------------
# worker: one family, a list of solution files, one JSON line per event
# ---------------------------------------------------------------------------------------------------------------

def _build_and_call(rel: str, task: Any, rec: Any, workdir: Path, calls: int, dev: Any) -> Any:
    """The harness's candidate setup, then ``calls`` forward calls; returns the solution's module. Its models die
    with this frame."""
    import torch

    from cudal1.harness.loading import load_candidate
    from cudal1.harness.models import construct_model, load_reference, make_inputs
    from cudal1.harness.params import share_parameters
    from cudal1.kernelzoo.triton_manifest import PACKAGE_DIR

    with torch.no_grad():
        reference, inputs, init_inputs = load_reference(task.source, workdir, 0, dev)
        cls = load_candidate((PACKAGE_DIR / rel).read_text(encoding="utf-8"), workdir)
        module = sys.modules.get(cls.__module__)
        if module is not None and getattr(module, "__file__", None):
            rec.sources[module.__file__] = rel
        model = construct_model(cls, init_inputs, 0, dev)
        share_parameters(reference, model)
        del reference
        model.eval()
        for seed in range(1, calls + 1):
            out = model(*make_inputs(inputs, seed, dev))
            del out
        _sync(dev)
    return module


def run_solution(rel: str, task: Any, rec: Any, workdir: Path, calls: int, dev: Any) -> dict[str, Any]:
    """Build and call one solution on ``dev`` while ``rec`` (a :class:`~cudal1.kernelzoo.triton_recorder.Recorder`)
    records; the event line to write (never raises)."""
    import torch

    from cudal1.kernelzoo.triton_recorder import not_launched

    rec.solution, rec.workdir = rel, workdir
    rec.files.add(rel)
    t0 = time.perf_counter()
    status, error, module = "ok", "", None
    before = set(sys.modules)
    try:
        module = _build_and_call(rel, task, rec, workdir, calls, dev)
    except BaseException as e:  # noqa: BLE001 - a solution may raise anything; the run goes on
        status = "error"
        error = f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
        tb = traceback.format_exc().splitlines()
        error += " | " + " / ".join(line.strip() for line in tb[-6:])[:600]
        module = next((sys.modules[n] for n in set(sys.modules) - before if n.startswith("cudal1_candidate_")), None)
    entries, rec_errors = rec.take()
    compiled = {e["kernel"].rsplit("::", 1)[1] for e in entries if e["kernel"].startswith(f"{rel}::")}
    broken = False
    try:
        _sync(dev)
    except BaseException:  # noqa: BLE001
        broken = True  # the CUDA context is gone (illegal address, say): this process can do nothing more
    gc.collect()
    if not broken and dev.type == "cuda":
        torch.cuda.empty_cache()
    return {"event": "done", "solution": rel, "status": status, "error": error,
            "seconds": round(time.perf_counter() - t0, 2), "entries": entries, "recording_errors": rec_errors,
            "not_launched": not_launched(module, compiled) if module is not None else [],
            "cuda_broken": broken}


def _sync(dev: Any) -> None:
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def worker(args: argparse.Namespace) -> int:
    """One family's pass over the solution files listed in ``--solutions-file``; events to ``--events``."""
    _use_tree()
    import torch

    from cudal1.harness import load_suite
    from cudal1.harness.models import exact_fp32
    from cudal1.kernelzoo.triton_manifest import code_sha256
    from cudal1.kernelzoo.triton_recorder import Recorder

    solutions = json.loads(Path(args.solutions_file).read_text())
    events = open(args.events, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the worker's life

    def emit(obj: dict[str, Any]) -> None:
        events.write(json.dumps(obj) + "\n")
        events.flush()

    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.cuda.set_device(0)
        rec = Recorder()
    else:  # a dry run of the machinery: solutions take their PyTorch paths, nothing compiles
        from triton.backends.compiler import GPUTarget

        rec = Recorder(GPUTarget("cuda", 90, 32))
    notes = rec.install()
    tasks = {t.name: t for t in load_suite(f"kernelbench:{args.kb}")}
    exact_fp32()
    emit({"event": "ready", "notes": notes})
    with tempfile.TemporaryDirectory(prefix="kbman-") as tmp:
        for rel in solutions:
            emit({"event": "start", "solution": rel})
            name = Path(rel).stem
            if name not in tasks:
                emit({"event": "done", "solution": rel, "status": "error", "seconds": 0.0, "entries": [],
                      "error": f"no KernelBench task {name} under {args.kb}"})
                continue
            done = run_solution(rel, tasks[name], rec, Path(tmp), args.calls, dev)
            done["kernels"] = dict(rec.kernels)
            done["files"] = {f: code_sha256(rec.package_dir / f) for f in sorted(rec.files)
                             if (rec.package_dir / f).is_file()}
            rec.files.clear()
            emit(done)
            if done["cuda_broken"]:
                return 3
    return 0


# ---------------------------------------------------------------------------------------------------------------
# orchestrator: passes per family, worker processes, crash / timeout handling, the manifest
# ---------------------------------------------------------------------------------------------------------------

class Slot:
    """One worker process working through its share of one family's solutions (restarted after a crash)."""

    def __init__(self, family: str, solutions: list[str], tmp: Path, index: int, args: argparse.Namespace) -> None:
        self.family, self.pending, self.tmp, self.index, self.args = family, list(solutions), tmp, index, args
        self.done: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.generation = 0
        self.current: str | None = None
        self.since = 0.0
        self.lines_read = 0
        self.ready = False

    def start(self) -> None:
        self.generation += 1
        if self.generation > 1 + len(self.done) + 3:  # restarts that make no progress: give up on the rest
            for rel in list(self.pending):
                self._finish(rel, "crashed", f"worker restarted {self.generation - 1} times: {self._stderr_tail()}")
            self.proc = None
            return
        stem = self.tmp / f"{self.family}-{self.index}-{self.generation}"
        self.events = stem.with_suffix(".events")
        self.stderr = stem.with_suffix(".stderr")
        stem.with_suffix(".json").write_text(json.dumps(self.pending))
        env = {**os.environ, "CUDAL1_ARCH": self.family, "CUDAL1_AUTOTUNE": "off", "PYTHONUNBUFFERED": "1"}
        env.pop("TRITON_INTERPRET", None)
        cmd = [sys.executable, __file__, "--worker", "--kb", str(self.args.kb), "--calls", str(self.args.calls),
               "--device", self.args.device,
               "--solutions-file", str(stem.with_suffix(".json")), "--events", str(self.events)]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(self.stderr, "w"))  # noqa: SIM115
        self.lines_read, self.current, self.since, self.ready = 0, None, time.monotonic(), False

    def poll(self) -> None:
        """Read new events; handle an exited worker (the solution it was in crashed) and a stuck one."""
        self._read()
        assert self.proc is not None
        if self.proc.poll() is not None:
            self._read()
            if self.current is not None:
                self._finish(self.current, "crashed", f"worker process exited with code {self.proc.returncode}: "
                                                      f"{self._stderr_tail()}")
            elif self.pending and not self.ready:
                self.notes.append(f"{self.family} worker {self.index} exited with {self.proc.returncode} "
                                  f"before a solution: {self._stderr_tail()}")
                for rel in list(self.pending):  # it cannot start: do not loop
                    self._finish(rel, "crashed", f"worker failed to start: {self._stderr_tail()}")
            self.proc = None
            if self.pending:
                self.start()
        elif not self.ready and time.monotonic() - self.since > max(self.args.solution_timeout, STARTUP_S):
            self.kill()
            for rel in list(self.pending):
                self._finish(rel, "crashed", f"worker not ready after {max(self.args.solution_timeout, STARTUP_S)} s: "
                                             f"{self._stderr_tail()}")
            self.proc = None
        elif self.current is not None and time.monotonic() - self.since > self.args.solution_timeout:
            self.kill()
            self._finish(self.current, "timeout", f"still running after {self.args.solution_timeout} s")
            self.proc = None
            if self.pending:
                self.start()

    def _read(self) -> None:
        if not self.events.exists():
            return
        lines = self.events.read_text(encoding="utf-8").split("\n")
        complete = lines[:-1]  # the last piece is a partial line (or empty)
        for line in complete[self.lines_read:]:
            ev = json.loads(line)
            if ev["event"] == "ready":
                self.ready = True
                self.notes += [n for n in ev.get("notes", []) if n not in self.notes]
            elif ev["event"] == "start":
                self.current, self.since = ev["solution"], time.monotonic()
            elif ev["event"] == "done":
                self.done[ev["solution"]] = ev
                if ev["solution"] in self.pending:
                    self.pending.remove(ev["solution"])
                self.current = None
        self.lines_read = len(complete)

    def _finish(self, rel: str, status: str, error: str) -> None:
        self.done[rel] = {"event": "done", "solution": rel, "status": status, "error": error, "seconds": 0.0,
                          "entries": []}
        if rel in self.pending:
            self.pending.remove(rel)
        self.current = None

    def _stderr_tail(self) -> str:
        try:
            lines = [ln for ln in self.stderr.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return " / ".join(lines[-4:])[-600:]

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def active(self) -> bool:
        return self.proc is not None


def run_pass(families: list[str], solutions: list[str], jobs: int, tmp: Path, deadline: float,
             args: argparse.Namespace) -> list[Slot]:
    """Run ``families`` side by side, ``jobs`` worker processes shared among them; returns the slots."""
    per = max(1, jobs // len(families))
    slots = [Slot(f, solutions[i::per], tmp, i, args) for f in families for i in range(per) if solutions[i::per]]
    for s in slots:
        s.start()
    while any(s.active for s in slots):
        time.sleep(0.5)
        for s in slots:
            if s.active:
                s.poll()
        if time.monotonic() > deadline:
            for s in slots:
                s.kill()
                s._read()
                if s.current is not None:
                    s._finish(s.current, "timeout", "the recording's deadline came while it ran")
                for rel in list(s.pending):
                    s._finish(rel, "not_run", "the recording's deadline came first")
                s.proc = None
            break
    return slots


def solution_files(only: set[str]) -> list[str]:
    """Solution files of the set and of pending/, relative to the kernelzoo package (``--only`` names filter)."""
    from cudal1.kernelzoo.solutions import KERNELBENCH_V0
    from cudal1.kernelzoo.triton_manifest import PACKAGE_DIR

    files = sorted([*KERNELBENCH_V0.glob("*.py"), *(KERNELBENCH_V0 / "pending").glob("*.py")])
    return [p.relative_to(PACKAGE_DIR).as_posix() for p in files if not only or p.stem in only]


def environment(args: argparse.Namespace) -> dict[str, Any]:
    import platform

    import torch
    import triton

    import cudal1.kernelzoo

    cuda = args.device == "cuda"
    return {"gpu": torch.cuda.get_device_name(0) if cuda else f"none ({args.device} dry run)",
            "capability": list(torch.cuda.get_device_capability(0)) if cuda else None,
            "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__,
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), "calls": args.calls,
            "kernelbench": str(args.kb), "cudal1_autotune": "off",
            "cudal1_kernelzoo": str(Path(cudal1.kernelzoo.__file__).resolve().parent.relative_to(ROOT)),
            "triton_env": {k: v for k, v in os.environ.items() if k.startswith("TRITON_")}}


def build_manifest(slots: list[Slot], env: dict[str, Any]) -> Any:
    """Merge the workers' events: entries deduplicated per (family, specialisation), their users united."""
    from cudal1.kernelzoo.triton_manifest import Entry, KernelRef, Manifest, SolutionRun

    kernels: dict[str, KernelRef] = {}
    files: dict[str, str] = {}
    entries: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[str, SolutionRun]] = {}
    notes: list[str] = []
    for s in slots:
        notes += [n for n in s.notes if n not in notes]
        for rel, ev in s.done.items():
            for kid, ref in ev.get("kernels", {}).items():
                kernels.setdefault(kid, KernelRef(**ref))
            for f, digest in ev.get("files", {}).items():
                if files.setdefault(f, digest) != digest:
                    notes.append(f"{f}: two workers saw different code")
            notes += [f"{s.family}: {e}" for e in ev.get("recording_errors", [])]
            for e in ev.get("entries", []):
                entry = Entry(family=s.family, **{k: v for k, v in e.items() if k != "used_by"})
                key = entry.spec_key()
                if key in entries:
                    users = entries[key]["used_by"]
                    users += [u for u in e["used_by"] if u not in users]
                else:
                    entries[key] = {**asdict(entry), "used_by": list(e["used_by"])}
            status, error = ev["status"], ev.get("error", "")
            if status == "ok" and ev.get("recording_errors"):  # it ran, but not every compilation is in
                status, error = "incomplete", "; ".join(ev["recording_errors"])[:600]
            runs.setdefault(s.family, {})[rel] = SolutionRun(
                status=status, seconds=ev.get("seconds", 0.0), error=error,
                compiles=len(ev.get("entries", [])), not_launched=tuple(ev.get("not_launched", ())))
    ordered = sorted(entries.values(), key=lambda e: (FAMILIES.index(e["family"]) if e["family"] in FAMILIES else 9,
                                                      e["kernel"], json.dumps(e, sort_keys=True)))
    return Manifest(environment=env, kernels=kernels,
                    entries=tuple(Entry(**{**e, "used_by": tuple(sorted(e["used_by"])),
                                           "problems": tuple(e["problems"])}) for e in ordered),
                    runs=runs, files=files, notes=tuple(notes))


def summary(manifest: Any) -> str:
    """What a person reads first: per family, solutions run and failed, entries, the shared-memory outliers."""
    lines = [f"{manifest.environment.get('gpu')} triton {manifest.environment.get('triton')} torch "
             f"{manifest.environment.get('torch')}: {len(manifest.kernels)} kernels, {len(manifest.entries)} entries"]
    for family, runs in sorted(manifest.runs.items()):
        bad = {s: r for s, r in runs.items() if r.status != "ok"}
        n = sum(e.family == family for e in manifest.entries)
        lines.append(f"{family}: {len(runs)} solutions, {len(runs) - len(bad)} ok, {n} entries")
        lines += [f"  {r.status:<8} {s}: {r.error[:300]}" for s, r in sorted(bad.items())]
    big = [e for e in manifest.entries if (e.shared_bytes or 0) > 101376]
    lines.append(f"{len(big)} entries use more than 99 KB of shared memory on this GPU (sm86 / sm89 allow 99 KB):")
    lines += [f"  {e.family} {e.shared_bytes} B {e.label}" for e in big]
    problems = [e for e in manifest.entries if e.problems]
    lines.append(f"{len(problems)} entries cannot be replayed exactly:")
    lines += [f"  {e.family} {e.kernel}: {'; '.join(e.problems)}" for e in problems]
    lines += [f"note: {n}" for n in manifest.notes]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, default=ROOT / ".carry" / "kb" / "kernelbench-v0",
                    help="KernelBench task files (folder with level1..level3)")
    ap.add_argument("--out", type=Path, help="manifest to write (default: $OUT/kb_triton_manifest.json)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated; the first runs alone first")
    ap.add_argument("--jobs", type=int, default=12, help="worker processes (default 12)")
    ap.add_argument("--calls", type=int, default=2, help="forward calls per solution (default 2)")
    ap.add_argument("--only", default="", help="comma-separated solution names (file stems) to run")
    ap.add_argument("--solution-timeout", type=float, default=240.0, help="seconds one solution may take")
    ap.add_argument("--deadline", type=float, default=480.0, help="seconds for everything; then write what is in")
    ap.add_argument("--device", default="cuda", help="cuda; cpu only for a dry run of the machinery (nothing compiles)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--solutions-file", help=argparse.SUPPRESS)
    ap.add_argument("--events", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.kb = args.kb.resolve()
    if args.worker:
        return worker(args)
    _use_tree()
    out = args.out or (Path(os.environ["OUT"]) / "kb_triton_manifest.json" if os.environ.get("OUT") else None)
    if out is None:
        ap.error("--out is needed (or $OUT)")
    if not (args.kb / "level1").is_dir():
        ap.error(f"no KernelBench task files at {args.kb} (level1/ missing)")
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    solutions = solution_files({s.strip() for s in args.only.split(",") if s.strip()})
    t0 = time.monotonic()
    deadline = t0 + args.deadline
    slots: list[Slot] = []
    with tempfile.TemporaryDirectory(prefix="kbman-") as tmp:
        for group in ([families[0]], families[1:]):
            if group and time.monotonic() < deadline:
                slots += run_pass(group, solutions, args.jobs, Path(tmp), deadline, args)
                print(f"pass {','.join(group)} done at {time.monotonic() - t0:.0f} s", flush=True)
        manifest = build_manifest(slots, environment(args))
    out.parent.mkdir(parents=True, exist_ok=True)
    manifest.write(out)
    print(summary(manifest))
    print(f"wrote {out} ({out.stat().st_size} bytes) in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
