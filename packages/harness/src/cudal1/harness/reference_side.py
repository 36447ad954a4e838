"""The clean reference worker of one task, set up once per task and lane (:class:`ReferenceSide`): task checks,
stateful detection, output layout, memory figures, the timing baseline (eager, torch.compile, CUDA graphs, cuDNN
benchmark), the calls per timed batch (:func:`calls_per_batch`), and the reference's time measured alone before any
candidate of the task is loaded (the drift check's yardstick). It never sees candidate code.
"""

from __future__ import annotations

import os
import secrets
import signal
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from . import cpu_wait
from .config import EvalConfig
from .leaves import committable
from .process import WorkerGone, WorkerProcess
from .protocol import WorkerReport
from .types import Task
from .verdict import Failure

#: makes the context a timing phase runs in (the pool's :meth:`cudal1.harness.lanes.Lane.timed`; alone: nothing)
Timed = Callable[[], AbstractContextManager[Any]]

BATCH_TARGET_MS = {"cuda": 20.0, "cpu": 8.0}  #: reported time of one batch of one model
#: most calls a batch whatever ``cfg.input_sets`` says: on CPU many for a fast task, so that a batch's fixed protocol
#: time (messages, stopping the worker) is spread thin against its calls (issue 40). ``cfg.input_sets`` (32 by
#: default) is the bound that applies; more (up to these) fill :data:`BATCH_TARGET_MS` for launch-bound GPU tasks of
#: 0.04-0.2 ms a call, whose 32-call batches of 1.3-6 ms were `timing_unstable` on an H100 (15 of kernelbench-v0's 22
#: such pairs, benchmarks/results/2026-12-06-kb-selfrun-after-h100.md): an experiment's setting, not yet a default
MAX_CALLS = {"cuda": 512, "cpu": 512}
#: CPU: the inputs and outputs of one batch of one worker, at most (when more than one call)
CPU_BATCH_BYTES = 256 << 20
COMMIT_MAX_BYTES = 64 << 20  #: a committed batch's outputs, at most (see ReferenceSide.commit)
MEMORY_SHARE = 0.35  #: of a worker's free GPU memory its batch's inputs and outputs may take
#: of the GPU's memory, what two workers may hold together (model, a batch's inputs and outputs, one call's peak)
#: before the task is *tight* (ReferenceSide.tight); a batch is made small enough to stay under it where one call can
TIGHT_SHARE = 0.6
ALONE_ROUNDS = 5  #: reference batches timed alone, before a candidate of the task is loaded
#: CPU: times the reference is timed alone when its threads waited for a core (:mod:`cudal1.harness.cpu_wait`),
#: a short pause between; the least contended is kept
ALONE_TRIES = 3
ALONE_PAUSE_S = 0.2


def fresh_seed() -> int:
    """A seed nobody can predict (drawn when it is needed, never before the calls it is used for)."""
    return secrets.randbits(62)


@dataclass
class ReferenceSide:
    """The clean reference worker of one task, set up and configured (see the module docstring)."""

    worker: WorkerProcess
    task: Task
    setup: WorkerReport
    n: int
    alone_ms: list[float]
    device: str
    #: CPU: how long each of the reference's torch threads waited for a core while it was timed alone
    #: (:func:`cudal1.harness.cpu_wait.measure`; None: not measured, or not a CPU lane)
    alone_wait: cpu_wait.Wait | None = None
    _pids: list[int] = field(default_factory=list, repr=False)

    @property
    def threads(self) -> int:
        """The reference process's torch intra-op threads (its own report of ``torch.get_num_threads()``)."""
        return int((self.setup.environment or {}).get("threads") or 1)

    def waited_ns(self) -> int | None:
        """Nanoseconds the reference process's threads have waited for a core so far (None: not measured: a GPU
        lane, or no scheduler statistics); the parent reads it around the reference's timed batches."""
        if self.device != "cpu":
            return None
        if not self._pids or not all(os.path.isdir(f"/proc/{p}") for p in self._pids):
            self._pids = sorted(self.worker.processes())  # the clean reference starts no process of its own
        return cpu_wait.thread_wait_ns(self._pids)

    @property
    def alone_contended(self) -> bool:
        """Whether the reference's time alone (the drift check's yardstick) was taken without the cores it needed."""
        return cpu_wait.contended(self.alone_wait)

    def time_alone(self, cfg: EvalConfig) -> Failure | None:
        """Time the reference alone (:data:`ALONE_ROUNDS` batches after one that warms up) into ``alone_ms``; on a
        CPU, again (up to :data:`ALONE_TRIES` times) while its threads waited for a core, keeping the least
        contended figures. Runs with nothing else of the pair on the machine (the caller's business)."""
        for attempt in range(ALONE_TRIES if self.device == "cpu" else 1):
            if attempt:
                time.sleep(ALONE_PAUSE_S)
            w0 = None
            batch_ms = 0.0
            alone: list[float] = []
            for i in range(ALONE_ROUNDS + 1):
                t0 = time.monotonic()
                b = self.worker.request("batch", {"seeds": [fresh_seed() for _ in range(self.n)]}, cfg.run_timeout_s,
                                        calls=self.n)
                if b.is_error:
                    return Failure("runtime_error", b.reason, b.flag or "baseline_failed")
                if i:  # the first batch warms up
                    alone.append(statistics.fmean(b.ms))  # a batch's mean call, as each paired round counts it
                    batch_ms += (time.monotonic() - t0) * 1000.0
                else:
                    w0 = self.waited_ns()
            w1 = self.waited_ns()
            wait = None if w0 is None or w1 is None else cpu_wait.measure((w1 - w0) / 1e6, batch_ms, self.threads)
            kept = self.alone_wait  # the least contended so far
            if attempt == 0 or (wait is not None and (kept is None or wait.share < kept.share)):
                self.alone_ms, self.alone_wait = alone, wait
            if not cpu_wait.contended(wait):
                break
        return None

    @property
    def stateful(self) -> bool:
        return self.setup.stateful

    @property
    def commit(self) -> bool:
        """Whether timed batches are committed (CPU): each worker writes every value of its batch's outputs to its
        outbox inside the parent's clocked window, is stopped before the window closes, and the parent digests the
        values itself while it is stopped (:func:`cudal1.harness.rounds.paired_round`). The digests then stay off
        the clock, where on a tiny CPU task they took several times the call, and the noise of that protocol time
        was room to hide work in (issue 40, benchmarks/results/2026-12-05-library-docstring-figures.md). Off on CUDA
        (the digest is one fused kernel there, and values would cross to the host) and for outputs larger than
        :data:`COMMIT_MAX_BYTES` a batch or not :func:`~cudal1.harness.leaves.committable`."""
        return (self.device == "cpu" and hasattr(signal, "SIGSTOP") and committable(self.setup.leaves)
                and self.n * self.setup.out_bytes <= COMMIT_MAX_BYTES)

    @property
    def tight(self) -> bool:
        """Whether two workers holding this task's model, a batch and one call's peak would not fit in
        :data:`TIGHT_SHARE` of the GPU together: then every worker frees its outputs and cached memory after each
        step. :func:`_calls_per_batch` keeps a task out of it unless one call per batch is already too much: a
        memory-bound kernel ran slower on memory the allocator had returned to the driver and taken back
        (``torch.cuda.empty_cache()`` between batches: ``mean_dim`` and ``tanh`` alike), which put honest self-pairs
        of tight tasks clearly above parity (issue 40, benchmarks/results/2026-12-04-harness-timing-h200.md)."""
        total = _gpu_bytes(self.setup)
        if self.device != "cuda" or total <= 0:
            return False
        return 2 * _worker_bytes(self.setup, self.n) > TIGHT_SHARE * total

    @classmethod
    def start(cls, worker: WorkerProcess, task: Task, cfg: EvalConfig, device: str,
              timed: Timed = nullcontext) -> ReferenceSide | Failure:
        """Set up ``task`` in ``worker``; a :class:`Failure` (status ``task_error``) when the task itself fails.
        The reference is timed alone inside ``timed()`` (see :func:`run_pair`)."""
        dev = device.split(":")[0]
        try:
            rep = worker.request("setup", {"task_source": task.source, "device": device, "seed": cfg.seed,
                                           "cpu_threads": cfg.cpu_threads, "rtol": cfg.rtol, "atol": cfg.atol},
                                 cfg.compile_timeout_s + cfg.run_timeout_s)
        except WorkerGone as e:
            return Failure("task_error", f"the task's reference process {e.ended}: {e.detail}", "task_error")
        if rep.is_error:
            return Failure("task_error", rep.reason, "task_error")
        n = calls_per_batch(rep, cfg, dev)
        try:
            conf = worker.request("configure", {"baseline": cfg.baseline, "n": n,
                                                "seeds": [fresh_seed() for _ in range(n)]}, cfg.run_timeout_s)
            if conf.is_error:
                return Failure("runtime_error", conf.reason, conf.flag or "baseline_failed")
            with timed():
                side = cls(worker, task, rep, n, [], dev)
                failed = side.time_alone(cfg)
                if failed is not None:
                    return failed
                if side.tight:  # else the cached memory stays: both workers fit, and memory given back runs slower
                    worker.request("release", {}, cfg.run_timeout_s)
        except WorkerGone as e:
            return Failure("task_error", f"the task's reference process {e.ended} while timing it alone: {e.detail}",
                           "task_error")
        return side

    def record(self) -> dict[str, Any]:
        """What the set-up measured, for the store (:meth:`cudal1.harness.store.ResultStore.add_reference`)."""
        s = self.setup
        return {"ref_ms": statistics.median(self.alone_ms), "alone_ms": self.alone_ms,
                "alone_cpu_wait": self.alone_wait.share if self.alone_wait is not None else None,
                "calls_per_batch": self.n,
                "stateful": s.stateful, "task_check": s.task_check, "set_bytes": s.set_bytes, "out_bytes": s.out_bytes,
                "model_bytes": s.model_bytes, "peak_bytes": s.peak_bytes, "environment": s.environment}

    def close(self) -> None:
        self.worker.close()


def calls_per_batch(setup: WorkerReport, cfg: EvalConfig, dev: str) -> int:
    """Calls per timed batch (each on its own input set): enough to fill :data:`BATCH_TARGET_MS`, at most
    :data:`MAX_CALLS`, ``cfg.input_sets`` and as many as :data:`MEMORY_SHARE` of the free GPU memory holds (inputs +
    outputs; on CPU, :data:`CPU_BATCH_BYTES`), and on a GPU few enough that the task is not tight
    (:attr:`ReferenceSide.tight`) where one call a batch is not."""
    n = max(1, min(cfg.input_sets, MAX_CALLS[dev], round(BATCH_TARGET_MS[dev] / max(setup.call_ms, 1e-3))))
    slot = max(setup.set_bytes + setup.out_bytes, 1)
    if dev == "cpu":
        n = max(1, min(n, CPU_BATCH_BYTES // slot))
        if committable(setup.leaves) and 0 < setup.out_bytes <= COMMIT_MAX_BYTES < n * setup.out_bytes:
            # few enough calls that the batch is committed: its digests then stay off the parent's clock, where
            # on a CPU task of 0.6 ms a call (relu, 4 MB outputs) they were 13 ms a call and decided the figure
            n = COMMIT_MAX_BYTES // setup.out_bytes
        return n
    if setup.free_bytes:
        n = max(1, min(n, int(MEMORY_SHARE * setup.free_bytes // slot)))
    if _gpu_bytes(setup) > 0:
        room = TIGHT_SHARE * _gpu_bytes(setup) / 2 - _worker_bytes(setup, 0)
        n = max(1, min(n, int(room // slot)))
    return n


def _gpu_bytes(setup: WorkerReport) -> float:
    """The GPU's memory (bytes) as the worker's set-up saw it; 0 when unknown (CPU)."""
    return float(setup.environment.get("gpu_memory_gib") or 0) * (1 << 30)


def _worker_bytes(setup: WorkerReport, n: int) -> int:
    """What one worker holds on the GPU with ``n`` calls a batch: its model, one call's peak and the batch's inputs
    and outputs (bytes)."""
    return (setup.peak_bytes or 0) + setup.model_bytes + n * (setup.set_bytes + setup.out_bytes)
