"""Worker side: what a worker process does with each command of the parent (see :mod:`cudal1.harness.protocol`).

One session per worker, of the worker's role, fixed at start:
:class:`~cudal1.harness.reference_session.ReferenceSession` (the clean process of a task; never sees candidate code)
or :class:`~cudal1.harness.candidate_session.CandidateSession` (inside the OS sandbox; runs the candidate). This
module holds what both do: correctness trials (``trial``), timed batches (``batch``), digests of a batch's outputs
(``digest``), chosen outputs' samples (``outputs``), memory (``release``, ``rewarm``), and the dispatch of commands
(:meth:`Session.handle`), which refuses a command of the other role.
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

from .allocator import CacheRewarm, placement_offsets
from .environment import ClockMonitor
from .models import StateSnapshot, clone_args, exact_fp32, make_inputs
from .outputs import Outbox, commit_outputs, describe_output, describe_outputs
from .timer import Timer


def _settle_collector() -> None:
    """Move every object alive now (torch, the task, the model, the candidate's module) out of the cyclic
    collector's reach (``gc.freeze``: a list splice, no collection), outside any clocked window. A worker holds a
    great many such objects (with torch imported a full collection is slow:
    benchmarks/results/2026-12-05-library-docstring-figures.md); Python starts full collections on its own whenever
    enough new objects survive, so without this one could land inside a timed batch or its digest (digests stalled
    now and then, far more often in candidates than in references:
    benchmarks/results/2026-12-05-harness-timing-h200.md). Afterwards a collection traverses only what was made
    since. Cyclic garbage frozen here is not reclaimed while the worker lives; a worker runs one candidate (or one
    task's reference), so that stays small."""
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


def _clone_output(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (list, tuple)):
        return type(out)(_clone_output(o) for o in out)
    return out


class Session:
    """State of one worker between commands: what both roles do. A worker runs one of the two roles' subclasses,
    :class:`~cudal1.harness.reference_session.ReferenceSession` or
    :class:`~cudal1.harness.candidate_session.CandidateSession`, which add their own commands and say how their
    failures are told."""

    role: str = ""
    #: the commands of this role beyond the shared ones
    ROLE_COMMANDS: frozenset[str] = frozenset()
    SHARED_COMMANDS = frozenset({"trial", "batch", "digest", "outputs", "release", "rewarm"})
    forward_name = "the model"  #: who raised, in a failure's reason
    raised_status = "runtime_error"  #: the status of an exception raised by the model's call
    unreadable_status = "runtime_error"  #: the status of an output that cannot be read
    timed_raise_flag: str | None = None  #: the flag of an exception raised in a timed call

    def __init__(self, workdir: Path, outbox: Path) -> None:
        if not self.role:
            raise TypeError("a Session is made as a ReferenceSession or a CandidateSession")
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
            raise Failure(self.raised_status, f"{self.forward_name} raised in {where}: {exc_line(e)}") from e
        self.guard(where, check_threads)
        return out

    def _undo_patches(self) -> None:
        """Put back what the model's code patched (the candidate role's; nothing to undo for the reference)."""

    def guard(self, when: str, check_threads: bool = True) -> None:
        """The in-process checks after the model's code ran (the candidate role's; none for the reference)."""

    def _after_trial_call(self, pristine: list[Any], used: list[Any], where: str) -> None:
        """After each correctness call (the candidate role checks its inputs were not written)."""

    def _settle(self) -> None:
        _settle_collector()

    # -- commands ---------------------------------------------------------------------------------------
    def trial(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Correctness: inputs drawn from the parent's seed; ``calls`` calls, each on its own clone (the
        reference and the candidate in eager mode), each output described into the outbox."""
        seed, calls = int(cmd["seed"]), int(cmd["calls"])
        outputs = []
        steps = {"draw": 0.0, "calls": 0.0, "digest": 0.0}  # diagnostics only (cmd "steps"), decided on nothing
        t0 = time.perf_counter()
        with torch.no_grad():
            args = make_inputs(self.inp_mod, seed, self.device)
            t1 = _synced(self.device) if cmd.get("steps") else time.perf_counter()
            steps["draw"] = t1 - t0
            for k in range(calls):
                mine = clone_args(args)
                out = self._call(self.model, mine, f"trial call {k + 1}")
                self._after_trial_call(args, mine, f"trial call {k + 1}")
                t2 = time.perf_counter()
                outputs.append(self._describe(out, f"{cmd['name']}_{k}", cmd.get("digest_seed"), cmd.get("sample_seed")))
                t3 = time.perf_counter()
                steps["calls"] += t2 - t1
                steps["digest"] += t3 - t2
                t1 = t3
                del out, mine
        self._free_if(cmd)
        reply = {"type": "trial", "outputs": outputs, "hints": self.hints()}
        if cmd.get("steps"):  # where a trial's time goes on the worker's clock (the parent asks with CUDAL1_TIMING_DEBUG=1)
            reply["steps_ms"] = {k: 1e3 * v for k, v in steps.items()}
        return reply

    @contextlib.contextmanager
    def _reading_outputs(self) -> Iterator[None]:
        """Turn an error raised while reading a model's output into this role's Failure (a lazy tensor subclass
        may raise when read)."""
        try:
            yield
        except Failure:
            raise
        except BaseException as e:  # noqa: BLE001 - a lazy tensor subclass may raise when read
            raise Failure(self.unreadable_status, f"the output could not be read: {exc_line(e)}") from e

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
        (:func:`~cudal1.harness.outputs.commit_outputs`)."""
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
                    raise Failure("runtime_error", f"{self.forward_name} raised in timed call {j + 1}: "
                                  f"{exc_line(e)}", self.timed_raise_flag) from e
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

    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Run one command; a :class:`Failure` becomes an ``error`` reply."""
        op = cmd.get("op")
        if op not in self.SHARED_COMMANDS | self.ROLE_COMMANDS:
            return {"type": "error", "status": "runtime_error", "reason": f"unknown command {op!r} for a "
                    f"{self.role} worker", "flag": "harness_error"}
        try:
            return getattr(self, str(op))(cmd)
        except Failure as f:
            return {"type": "error", "status": f.status, "reason": f.reason[:1000], "flag": f.flag,
                    "hints": self.hints()}
        except torch.cuda.OutOfMemoryError as e:
            return {"type": "error", "status": self.raised_status,
                    "reason": f"CUDA out of memory in the {self.role} ({op}): {exc_line(e)}", "flag": None}
