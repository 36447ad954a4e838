"""What a worker process does with each command of the parent (see :mod:`cudal1.harness.protocol`).

One :class:`Session` per worker. Its role is fixed at start:

* ``reference``: the clean process. It loads the task and builds the reference model; it never sees
  candidate code. It answers ``setup`` (task checks, stateful detection, output layout, memory figures),
  ``configure`` (the timing baseline: eager, torch.compile, CUDA graphs, cuDNN benchmark), ``trial``,
  ``batch``, ``digest``, ``outputs`` and the clock monitor.
* ``candidate``: runs inside the OS sandbox. ``load`` imports the candidate (the first candidate code that
  runs), then ``trial``, ``batch``, ``digest``, ``outputs`` and ``observe``.

Everything a candidate session reports is a claim: the parent compares outputs itself and bounds times with
its own clock (:mod:`cudal1.harness.pair`). The in-process checks here (patched bindings, backend switches,
threads, training mode, input writes, reduced-precision ops, kernels launched) are hints that can only
fail or flag a candidate, never pass one.
"""

from __future__ import annotations

import contextlib
import gc
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from . import integrity
from .allocator import CacheRewarm, placement_offsets
from .baselines import BaselineError, reference_runner
from .buildcache import extension_snapshot
from .environment import ClockMonitor, device_info
from .leaves import Outbox, commit_outputs, describe_output, describe_outputs
from .loading import CandidateLoadError, load_candidate, load_task_copy
from .models import (
    StateSnapshot,
    clone_args,
    construct_model,
    exact_fp32,
    load_reference,
    make_inputs,
    nbytes,
)
from .params import randomise_, share_parameters
from .task_checks import check_task
from .timing import Timer


def _settle_collector() -> None:
    """Move every object alive now (torch, the task, the model, the candidate's module) out of the cyclic
    collector's reach (``gc.freeze``: a list splice, no collection), outside any clocked window. A worker holds
    hundreds of thousands of such objects (a full collection took 106 ms on a 2-core CPU with torch imported, 334k
    objects); Python starts full collections on its own whenever enough new objects survive, so without this one
    could land inside a timed batch or its digest (on an H200 digests stalled 350-520 ms now and then, ten times as
    often in candidates as in references: benchmarks/results/2026-12-05-harness-timing-h200.md). Afterwards a
    collection traverses only what was made since. Cyclic garbage frozen here is not reclaimed while the worker
    lives; a worker runs one candidate (or one task's reference), so that stays small."""
    gc.freeze()


def _synced(device: torch.device) -> float:
    """``time.perf_counter()`` after the device has finished its queued work (CUDA), for step timings."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


class Failure(Exception):
    """Ends a command with an ``error`` reply: the status the parent should record, a reason, a flag."""

    def __init__(self, status: str, reason: str, flag: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.flag = status, reason, flag


def exc_line(e: BaseException) -> str:
    """``Type: first line of message (candidate line N)`` for a person."""
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    for fr in reversed(tb):
        if "cudal1_candidate_" in fr.filename:
            where = f" (candidate line {fr.lineno})"
            break
    msg = str(e).strip().splitlines()[0][:400] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}{where}"


def _fingerprint(out: Any) -> list[tuple]:
    """Digests (fixed weights) of an output's tensor leaves and its plain values: equal for equal outputs."""
    from .compare import flatten_outputs
    from .digest import digest_tensor

    fp: list[tuple] = []
    for x in flatten_outputs(out):
        if isinstance(x, torch.Tensor):
            d = digest_tensor(x, 12345)
            fp.append((d.d1, d.d2, d.a2, d.nan, d.posinf, d.neginf))
        else:
            fp.append((repr(x),))
    return fp


def _fingerprints_equal(a: list[tuple], b: list[tuple]) -> bool:
    """Equal up to the rounding noise of a non-deterministic kernel (1e-5 of the output's magnitude, as the
    task checks' "unchanged")."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if len(x) != len(y):
            return False
        if len(x) == 1:
            if x != y:
                return False
            continue
        scale = max(abs(x[2]), abs(y[2]), 1e-30) ** 0.5  # sqrt(sum x^2)
        if x[3:] != y[3:] or abs(x[0] - y[0]) > 1e-5 * scale * 10 or abs(x[1] - y[1]) > 1e-5 * max(x[2], y[2], 1e-30):
            return False
    return True


def _clone_output(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (list, tuple)):
        return type(out)(_clone_output(o) for o in out)
    return out


class Session:
    """State of one worker between commands."""

    def __init__(self, role: str, workdir: Path, outbox: Path) -> None:
        if role not in ("reference", "candidate"):
            raise ValueError(f"unknown worker role {role!r}")
        self.role = role
        self.workdir, self.outbox = workdir, outbox
        self.device = torch.device("cpu")
        self.model: Any = None  # what is called: the reference (in baseline mode for timing) or ModelNew
        self.module: torch.nn.Module | None = None
        self.timed_fn: Any = None
        self.inp_mod: Any = None
        self.state: StateSnapshot | None = None
        self.sets: list[list[Any]] = []
        self.kept: list[Any] = []
        self.cache = CacheRewarm()  # cudaMalloc out of the timed calls after a release (allocator.py)
        self.rtol: float | None = None
        self.atol: float | None = None
        self.flags: set[str] = set()
        self.evidence: dict[str, list[str]] = {}
        self.clock_monitor: ClockMonitor | None = None
        self.timer: Timer | None = None
        self.graph_sets: list[list[Any]] | None = None
        self.copy_outputs = False

    # -- shared -----------------------------------------------------------------------------------------
    def _device_setup(self, cmd: dict[str, Any]) -> None:
        exact_fp32()
        self.device = torch.device(cmd["device"])
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        elif cmd.get("cpu_threads"):
            torch.set_num_threads(int(cmd["cpu_threads"]))
        self.rtol, self.atol = cmd.get("rtol"), cmd.get("atol")
        self.sync = (lambda s=torch.cuda.synchronize, d=self.device: s(d)) if self.device.type == "cuda" else (lambda: None)

    def _make_timer(self) -> None:
        l2 = 0
        if self.device.type == "cuda":
            l2 = int(getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 0) or 0)
        self.timer = Timer(self.device, l2_flush_bytes=2 * l2)

    def _free_bytes(self) -> int | None:
        if self.device.type != "cuda":
            return None
        free, _total = torch.cuda.mem_get_info(self.device)
        return int(free)

    def hints(self) -> dict[str, Any]:
        return {"flags": sorted(self.flags), "evidence": {k: v[:10] for k, v in self.evidence.items()}}

    def _call(self, fn: Any, args: list[Any], where: str, check_threads: bool = True) -> Any:
        if self.state is not None:
            self.state.restore()
        try:
            out = fn(*args)
            self.sync()
        except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt from candidate code too
            self._undo_patches()
            who = "ModelNew.forward" if self.role == "candidate" else "the reference"
            raise Failure("runtime_error" if self.role == "candidate" else "task_error",
                          f"{who} raised in {where}: {exc_line(e)}") from e
        self.guard(where, check_threads)
        return out

    # -- candidate-side hints ---------------------------------------------------------------------------
    def _undo_patches(self) -> None:
        if self.role == "candidate" and hasattr(self, "snapshot"):
            self.snapshot.restore()

    def guard(self, when: str, check_threads: bool = True) -> None:
        """Candidate role: undo and report patched bindings, flipped backend switches, threads left running
        and training mode (hints; each can only fail or flag the candidate)."""
        if self.role != "candidate" or not hasattr(self, "snapshot"):
            return
        changed = self.snapshot.changed()
        if changed:
            self.snapshot.restore()
            raise Failure("rejected", f"the candidate replaced {', '.join(changed[:5])} ({when}); patching torch, "
                          "timers or the harness is not allowed", "monkeypatch")
        now = integrity.backend_flags()
        new_flags, what = integrity.flag_changes(self.backend, now)
        if what:
            self.flags.update(new_flags)
            self.evidence.setdefault("backend_switches", []).extend(f"{w} ({when})" for w in what)
            integrity.restore_backend_flags(self.backend)
        extra = integrity.threads_left(self.threads0) if check_threads else frozenset()
        if extra:
            raise Failure("rejected", f"{len(extra)} thread(s) started by the candidate still run after it returned "
                          f"({when}; counted in /proc/self/task): work outside the timed call", "threads_left_running")
        training = integrity.training_modules(self.module) if self.module is not None else []
        if training:
            raise Failure("rejected", f"the candidate switched {', '.join(training[:3])} to training mode ({when}); "
                          "both models must stay in eval mode", "mode_change")

    # -- commands ---------------------------------------------------------------------------------------
    def setup(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: load the task, build the reference, check the task, describe its output."""
        self._device_setup(cmd)
        seed = int(cmd["seed"])
        env = device_info(self.device)
        try:
            with torch.no_grad():
                model, self.inp_mod, _init = load_reference(cmd["task_source"], self.workdir, seed, self.device)
                self.module = model
                args = make_inputs(self.inp_mod, seed, self.device)
                set_bytes = nbytes(args)
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                    torch.cuda.reset_peak_memory_stats(self.device)
                    base = torch.cuda.memory_allocated(self.device)
                snap = StateSnapshot(model)
                # two calls on the same inputs: a stateful reference answers differently. Each output is reduced
                # to a fingerprint and freed before the next call (a task may need most of the GPU for one call)
                o1 = model(*clone_args(args))
                peak = None
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                    peak = int(torch.cuda.max_memory_allocated(self.device) - base)
                out_bytes = nbytes(o1)
                leaves = describe_output(o1, digest_seed=None, sample_seed=None, outbox=None)
                f1 = _fingerprint(o1)
                del o1
                f2 = _fingerprint(model(*clone_args(args)))
                stateful = not _fingerprints_equal(f1, f2)
                snap.restore()
                if stateful:
                    self.state = snap
                self._make_timer()
                assert self.timer is not None
                times = []
                for _ in range(3):
                    if self.state is not None:
                        self.state.restore()
                    t, _o = self.timer.time_call(model, args)
                    times.append(t)
                    del _o
                call_ms = min(times)
                task_check = (check_task(model, lambda s: make_inputs(self.inp_mod, s, self.device), seed,
                                         before_call=snap.restore if stateful else None)
                              if cmd.get("check_task", True) else {"degenerate": False, "findings": [], "notes": []})
                rec = integrity.OpRecorder()
                signature: str | None = None
                try:
                    with rec:
                        if self.state is not None:
                            self.state.restore()
                        model(*clone_args(args))
                    low = rec.low_precision_ops()
                    signature = rec.signature()
                except Exception:  # noqa: BLE001 - some models cannot run under a dispatch mode
                    low = []
                if self.state is not None:
                    self.state.restore()
        except Failure:
            raise
        except BaseException as e:  # noqa: BLE001 - the task's own code failed: not a candidate's fault
            raise Failure("task_error", f"the task failed to load or run its Model: {exc_line(e)}", "task_error") from e
        self.model = model
        model_bytes = nbytes(list(model.parameters()) + list(model.buffers()))
        return {"type": "setup", "task_check": task_check, "stateful": stateful, "leaves": leaves,
                "set_bytes": set_bytes, "out_bytes": out_bytes, "model_bytes": model_bytes,
                "peak_bytes": peak, "call_ms": call_ms, "free_bytes": self._free_bytes(), "environment": env, "low_precision_ops": low,
                "op_signature": signature}

    def configure(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: the runner timed for the configured baseline, with ``n`` input buffers (CUDA graphs
        capture one graph per buffer set; later batches copy new values into them)."""
        baseline, n = str(cmd["baseline"]), int(cmd["n"])
        seeds = [int(s) for s in cmd["seeds"]][:n]
        with torch.no_grad():
            sets = [make_inputs(self.inp_mod, s, self.device) for s in seeds]
            try:
                self.timed_fn = reference_runner(self.model, baseline, sets, self.device)
                if baseline != "eager":
                    for args in sets[:2]:
                        if self.state is not None:
                            self.state.restore()
                        self.timed_fn(*args)
                    self.sync()
            except (BaselineError, Exception) as e:  # noqa: BLE001
                raise Failure("runtime_error", f"the reference failed in baseline {baseline!r}: {exc_line(e)}",
                              "baseline_failed") from e
        self.graph_sets = sets if baseline == "cudagraph" else None
        # CUDA-graph trees (reduce-overhead) hand out outputs that the next call overwrites: keep a copy, made
        # outside the timed call, so that every output of a batch can still be digested after the batch
        self.copy_outputs = baseline == "compile-reduce-overhead"
        self.sets = sets
        _settle_collector()
        return {"type": "configured", "free_bytes": self._free_bytes()}

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: build a copy of the reference (only to hand its parameter values over), import the
        candidate, construct ``ModelNew``, load the parameters. The first candidate code runs here."""
        self._device_setup(cmd)
        seed = int(cmd["seed"])
        try:
            with torch.no_grad():
                ref_mod = load_task_copy(cmd["task_source"], self.workdir, "ref")
                self.inp_mod = load_task_copy(cmd["task_source"], self.workdir, "inputs")
                init_inputs = list(self.inp_mod.get_init_inputs())
                reference = construct_model(ref_mod.Model, init_inputs, seed, self.device)
                randomise_(reference, seed)
        except BaseException as e:  # noqa: BLE001
            raise Failure("task_error", f"the task failed to load in the candidate's process: {exc_line(e)}",
                          "task_error") from e
        self._make_timer()
        self.snapshot = integrity.IdentitySnapshot()
        self.backend = integrity.backend_flags()
        integrity.warm_thread_pools()  # torch's pools exist before the baseline: they are not the candidate's
        self.threads0 = integrity.live_threads()
        ext_dir = cmd.get("extensions_dir")
        before = extension_snapshot(ext_dir) if ext_dir else {}
        t0 = time.perf_counter()
        try:
            cls = load_candidate(cmd["candidate_source"], self.workdir)
        except CandidateLoadError as e:
            self._undo_patches()
            raise Failure("compile_error", str(e)) from e
        import_s = time.perf_counter() - t0
        after = extension_snapshot(ext_dir) if ext_dir else {}
        build = {"import_s": round(import_s, 3), "extensions": sorted(after),
                 "built_now": any(after.get(k) != v for k, v in before.items()) or bool(set(after) - set(before))}
        self.guard("while importing the candidate")
        try:
            with torch.no_grad():
                self.module = construct_model(cls, init_inputs, seed, self.device)
        except BaseException as e:  # noqa: BLE001
            self._undo_patches()
            raise Failure("runtime_error", f"ModelNew(*get_init_inputs()) failed: {exc_line(e)}") from e
        try:
            with torch.no_grad():
                unmapped = share_parameters(reference, self.module)
        except Exception as e:  # noqa: BLE001
            raise Failure("runtime_error", f"loading the reference's parameters into ModelNew failed: {exc_line(e)}") from e
        del reference
        self.module.eval()
        self.guard("while constructing the candidate")
        if cmd.get("stateful"):
            self.state = StateSnapshot(self.module)
        self.model = self.timed_fn = self.module
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        _settle_collector()
        return {"type": "loaded", "build": build, "unmapped": unmapped, "free_bytes": self._free_bytes(),
                "hints": self.hints()}

    def trial(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Correctness: inputs drawn from the parent's seed; ``calls`` calls, each on its own clone (the
        reference and the candidate in eager mode), each output described into the outbox."""
        seed, calls = int(cmd["seed"]), int(cmd["calls"])
        outputs = []
        with torch.no_grad():
            args = make_inputs(self.inp_mod, seed, self.device)
            for k in range(calls):
                mine = clone_args(args)
                out = self._call(self.model, mine, f"trial call {k + 1}")
                if self.role == "candidate":
                    self._check_inputs(args, mine, f"trial call {k + 1}")
                outputs.append(self._describe(out, f"{cmd['name']}_{k}", cmd.get("digest_seed"), cmd.get("sample_seed")))
                del out, mine
        self._free_if(cmd)
        return {"type": "trial", "outputs": outputs, "hints": self.hints()}

    def _check_inputs(self, pristine: list[Any], used: list[Any], where: str) -> None:
        for k, (p, u) in enumerate(zip(pristine, used, strict=True)):
            if isinstance(p, torch.Tensor) and not (isinstance(u, torch.Tensor) and torch.equal(p, u)):
                raise Failure("rejected", f"the candidate wrote into its input {k} ({where}); inputs must not be "
                              "mutated", "input_mutated")

    @contextlib.contextmanager
    def _reading_outputs(self) -> Iterator[None]:
        """Turn an error raised while reading a model's output into this role's Failure (a lazy tensor subclass
        may raise when read)."""
        try:
            yield
        except Failure:
            raise
        except BaseException as e:  # noqa: BLE001 - a lazy tensor subclass may raise when read
            raise Failure("incorrect" if self.role == "candidate" else "task_error",
                          f"the output could not be read: {exc_line(e)}") from e

    def _describe(self, out: Any, name: str, digest_seed: Any, sample_seed: Any) -> list[dict]:
        box = Outbox(self.outbox, name) if sample_seed is not None else None
        try:
            # both roles compute the reference's tolerance sums with a digest (the candidate's are ignored): the
            # same work in both processes keeps the parent's clock check fair
            with self._reading_outputs():
                return describe_output(out, digest_seed=None if digest_seed is None else int(digest_seed),
                                       sample_seed=None if sample_seed is None else int(sample_seed), outbox=box,
                                       rtol=self.rtol, atol=self.atol, reference=True)
        finally:
            if box is not None:
                box.close()

    def _describe_batch(self, outs: list[Any], digest_seed: int) -> list[list[dict]]:
        """Digests of a batch's outputs, computed together (see :meth:`_describe` on why with tolerances)."""
        with self._reading_outputs():
            return describe_outputs(outs, digest_seed=digest_seed, rtol=self.rtol, atol=self.atol, reference=True)

    def batch(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Timing: draw one input set per seed, then time each call (L2 flushed, whole device synchronised
        before and after, host clock between), keeping every output for ``digest`` and ``outputs``. With ``commit``
        the reply also carries the outputs' leaf records, every value written to the outbox
        (:func:`~cudal1.harness.leaves.commit_outputs`)."""
        seeds = [int(s) for s in cmd["seeds"]]
        self.kept = []
        t0 = time.perf_counter()
        with torch.no_grad():
            if self.graph_sets is not None:  # captured graphs read fixed buffers: new values go into them
                if len(seeds) != len(self.graph_sets):
                    raise Failure("runtime_error", f"a batch of {len(seeds)} for {len(self.graph_sets)} graphs",
                                  "harness_error")
                for buf, s in zip(self.graph_sets, seeds, strict=True):
                    for old, new in zip(buf, make_inputs(self.inp_mod, s, self.device), strict=True):
                        if isinstance(old, torch.Tensor):
                            old.copy_(new)
                self.sets = self.graph_sets
            else:
                self.sets = []  # free the last batch's inputs before drawing new ones
                self.sets = [make_inputs(self.inp_mod, s, self.device) for s in seeds]
            self.cache.rewarm(self.device)  # untimed: what the last release returned to the driver
            steps = bool(cmd.get("steps"))
            t1 = _synced(self.device) if steps else 0.0
            assert self.timer is not None
            ms: list[float] = []
            ev: list[float] = []
            for j, args in enumerate(self.sets):
                if self.state is not None:
                    self.state.restore()
                try:
                    t, e, out = self.timer.time_call_detailed(self.timed_fn, args)
                except BaseException as e:  # noqa: BLE001
                    self._undo_patches()
                    who = "ModelNew.forward" if self.role == "candidate" else "the reference"
                    raise Failure("runtime_error", f"{who} raised in timed call {j + 1}: {exc_line(e)}",
                                  None if self.role == "candidate" else "baseline_failed") from e
                ms.append(t)
                if e is not None:
                    ev.append(e)
                if self.copy_outputs:
                    out = _clone_output(out)
                self.kept.append(out)
        # the in-process checks run in their own command (check), outside the parent's clock: the reference's
        # process does not run them, and the clock check compares the two processes' overheads
        t2 = time.perf_counter()
        placement = None
        if self.device.type == "cuda":
            placement = {"inputs": placement_offsets(self.sets), "outputs": placement_offsets(self.kept)}
        reply = {"type": "batch", "ms": ms, "event_ms": ev or None, "placement": placement, "hints": self.hints()}
        if cmd.get("commit"):  # every value to the outbox, on the parent's clock; the parent digests them (pair.py)
            with torch.no_grad(), self._reading_outputs():
                reply["outputs"] = commit_outputs(self.kept, self.outbox, "committed")
        if steps:  # diagnostics (the parent asks with CUDAL1_TIMING_DEBUG=1): where the batch's protocol time goes
            reply["steps_ms"] = {"draw": 1e3 * (t1 - t0), "calls": 1e3 * (t2 - t1),
                                 "reply": 1e3 * (_synced(self.device) - t2)}
        return reply

    def check(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: the in-process checks after timed batches (patched bindings, switches, threads,
        training mode)."""
        self.guard("after a timed batch")
        return {"type": "checked", "hints": self.hints()}

    def digest(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Digests of every output of the last batch (the parent's clock runs until this reply)."""
        seed = int(cmd["seed"])
        t0 = time.perf_counter()
        with torch.no_grad():
            digests = self._describe_batch(self.kept, seed)
        reply: dict[str, Any] = {"type": "digest", "outputs": digests}
        if cmd.get("steps"):
            reply["steps_ms"] = {"digest": 1e3 * (_synced(self.device) - t0)}
        self._free_if(cmd)
        return reply

    def outputs(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Samples (all values of small leaves) of the chosen outputs of the last batch, written to the outbox."""
        idx = [int(i) for i in cmd["indices"]]
        if any(not 0 <= i < len(self.kept) for i in idx):
            raise Failure("runtime_error", f"output indices {idx} out of range", "harness_error")
        with torch.no_grad():
            outs = [self._describe(self.kept[i], f"{cmd['name']}_{i}", None, cmd["sample_seed"]) for i in idx]
        self._free_if(cmd)
        return {"type": "outputs", "outputs": outs}

    def _free_if(self, cmd: dict[str, Any]) -> None:
        """``"free": true`` on a command: afterwards drop the batch's outputs and inputs and return cached GPU
        memory to the driver (tasks that need most of the GPU: the other worker's calls need it next)."""
        if cmd.get("free"):
            self.release(cmd)

    def rewarm(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Before a timed batch, outside the parent's clock: take back into the allocator's cache the GPU memory the
        last release returned (:class:`cudal1.harness.allocator.CacheRewarm`), so that the batch's input drawing
        and calls reuse cached blocks instead of calling ``cudaMalloc`` inside the clocked window."""
        return {"type": "rewarmed", "bytes": self.cache.rewarm(self.device)}

    def release(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Drop the last batch's inputs and outputs (memory for the next phase)."""
        self.kept = []
        if self.graph_sets is None:
            self.sets = []
        self.cache.release(self.device)
        return {"type": "released", "free_bytes": self._free_bytes()}

    def observe(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: one call recorded op by op (dtypes) and one profiled (kernel names)."""
        args = make_inputs(self.inp_mod, int(cmd["seed"]), self.device)
        rec = integrity.OpRecorder()
        low: list[str] | None
        signature: str | None = None
        with torch.no_grad():
            try:
                with rec:
                    self._call(self.model, clone_args(args), "the recorded call")
                low = rec.low_precision_ops()
                signature = rec.signature()
            except Failure:
                raise
            except Exception as e:  # noqa: BLE001 - some candidates cannot run under a dispatch mode
                low = None
                self.evidence.setdefault("op_recording", []).append(f"unavailable: {exc_line(e)}")
            self.guard("during the recorded call")
            before = integrity.live_threads()
            names = integrity.kernel_names(lambda: self._call(self.model, clone_args(args), "the profiled call",
                                                              check_threads=False), self.device)
            self.threads0 = self.threads0 | (integrity.live_threads() - before)  # the profiler's own threads
            self.guard("during the profiled call")
        return {"type": "observe", "low_precision_ops": low, "kernels": names, "op_signature": signature,
                "hints": self.hints()}

    def monitor(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: start or stop sampling the GPU's clocks and throttle reasons (NVML)."""
        if cmd["action"] == "start":
            self.clock_monitor = ClockMonitor(self.device)
            self.clock_monitor.__enter__()
            return {"type": "monitor", "clocks": {}}
        clocks: dict[str, Any] = {}
        if self.clock_monitor is not None:
            self.clock_monitor.__exit__(None, None, None)
            clocks = self.clock_monitor.summary()
            self.clock_monitor = None
        return {"type": "monitor", "clocks": clocks}

    HANDLERS = {"setup": "setup", "configure": "configure", "load": "load", "trial": "trial", "batch": "batch",
                "digest": "digest", "outputs": "outputs", "release": "release", "rewarm": "rewarm",
                "observe": "observe", "monitor": "monitor", "check": "check"}
    REFERENCE_ONLY = frozenset({"setup", "configure", "monitor"})
    CANDIDATE_ONLY = frozenset({"load", "observe", "check"})

    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Run one command; a :class:`Failure` becomes an ``error`` reply."""
        op = cmd.get("op")
        if op not in self.HANDLERS or (op in self.REFERENCE_ONLY and self.role != "reference") or (
                op in self.CANDIDATE_ONLY and self.role != "candidate"):
            return {"type": "error", "status": "runtime_error", "reason": f"unknown command {op!r} for a "
                    f"{self.role} worker", "flag": "harness_error"}
        try:
            return getattr(self, self.HANDLERS[op])(cmd)
        except Failure as f:
            return {"type": "error", "status": f.status, "reason": f.reason[:1000], "flag": f.flag,
                    "hints": self.hints()}
        except torch.cuda.OutOfMemoryError as e:
            who = "the candidate" if self.role == "candidate" else "the reference"
            return {"type": "error", "status": "runtime_error" if self.role == "candidate" else "task_error",
                    "reason": f"CUDA out of memory in {who} ({op}): {exc_line(e)}", "flag": None}
