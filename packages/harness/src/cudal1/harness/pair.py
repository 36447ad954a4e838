"""One (task, candidate) pair across two processes, driven and judged by the parent.

* :class:`ReferenceSide`: the clean reference worker of one task (it never sees candidate code). Set up
  once per task and lane: task checks, stateful detection, output layout, memory figures, the timing
  baseline (eager, torch.compile, CUDA graphs, cuDNN benchmark), and the reference's time measured alone
  before any candidate of the task is loaded (the drift check's yardstick).
* :func:`run_pair`: loads the candidate in its (sandboxed) worker, then

  1. correctness: ``trials`` input seeds drawn by the parent at check time; the reference runs once, the
     candidate twice (on separate clones), and the parent compares every output with its own judge
     (:func:`cudal1.harness.leaves.judge`: structure, dtype, shape, device, NaN/Inf, digests, values);
  2. timing in paired rounds: each round draws fresh seeds for ``n`` calls, runs the reference's batch and
     the candidate's batch in random order, one worker on the machine at a time (the other's processes stopped,
     :meth:`WorkerProcess.freeze`), receives the digests of every output on the parent's clock, compares them,
     and in some rounds fetches and compares one output chosen after the first batch's calls. Per-call times come
     from each process (host clock between device-wide synchronisations, L2 flushed); a round counts the mean of
     its calls; the parent's clock excess is charged into the candidate's time (:mod:`clockcheck`), and the
     reference's paired times are compared with its time alone (``reference_drift``); of up to
     ``cfg.attempts`` attempts, one that passed both checks is reported (:mod:`cudal1.harness.attempts`);
  3. one observed call of the candidate (reduced-precision ops, kernels launched: hints), last, because a
     profiler can leave a process slower;
  4. only when the reference drifted beyond its limit (and the clock check held): the drift re-check
     (:func:`_drift_recheck`). The candidate's process is killed (with every process of its sandbox), and the
     reference is timed again in paired rounds beside a *twin*, a fresh worker running the task's own reference;
     the pair is rejected ``reference_drift`` only if the reference also ran slower beside the candidate than
     beside its twin.

Everything ends in :class:`cudal1.harness.verdict.Observations`; :func:`cudal1.harness.verdict.assemble`
makes the result.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from . import clockcheck
from .attempts import (
    Attempt,
    choose_attempt,
    clock_rejection,
    drift_limit,
    enough_flagrant,
    flagrant_count,
    reference_drift,
)
from .config import EvalConfig
from .leaves import Leaf, LeafError, committable, digest_committed, judge
from .process import WorkerGone, WorkerProcess
from .protocol import WorkerReport
from .static_checks import StaticReport
from .suite import reference_candidate
from .timing import PROCESS_DRAW_SD, PairedTimes, summarise_rounds
from .types import Candidate, Task
from .verdict import Failure, Observations

#: makes the context a timing phase runs in (the pool's :meth:`cudal1.harness.lanes.Lane.timed`; alone: nothing)
Timed = Callable[[], AbstractContextManager[Any]]

CHECK_FRACTION = 0.10  #: rounds whose chosen output is fetched and compared in full (at least one per bucket)
BATCH_TARGET_MS = {"cuda": 20.0, "cpu": 8.0}  #: reported time of one batch of one model
#: most calls a batch: on CPU many for a fast task, so that a batch's fixed protocol time (messages, stopping the
#: worker) is spread thin against its calls (issue 40); never more than ``cfg.input_sets``
MAX_CALLS = {"cuda": 32, "cpu": 32}
CPU_BATCH_BYTES = 256 << 20  #: CPU: the inputs and outputs of one batch of one worker, at most (when more than one call)
COMMIT_MAX_BYTES = 64 << 20  #: a committed batch's outputs, at most (see ReferenceSide.commit)
MEMORY_SHARE = 0.35  #: of a worker's free GPU memory its batch's inputs and outputs may take
#: of the GPU's memory, what two workers may hold together (model, a batch's inputs and outputs, one call's peak)
#: before the task is *tight* (ReferenceSide.tight); a batch is made small enough to stay under it where one call can
TIGHT_SHARE = 0.6
ALONE_ROUNDS = 5  #: reference batches timed alone, before a candidate of the task is loaded
#: a candidate measured this much slower than the reference (speedup below it) is not measured again for a steadier
#: figure: a candidate 600 times slower than a 0.03 ms CPU reference took 0.64 s a batch and ran its pair past a
#: 20 s limit on two loaded cores; every check of the attempt still applies, and no figure that low is paid
SLOW_ENOUGH = 0.1


def fresh_seed() -> int:
    """A seed nobody can predict (drawn when it is needed, never before the calls it is used for)."""
    return secrets.randbits(62)


def _failure(rep: WorkerReport) -> Failure:
    return Failure(rep.status, rep.reason, rep.flag)


@dataclass
class ReferenceSide:
    """The clean reference worker of one task, set up and configured (see the module docstring)."""

    worker: WorkerProcess
    task: Task
    setup: WorkerReport
    n: int
    alone_ms: list[float]
    device: str

    @property
    def stateful(self) -> bool:
        return self.setup.stateful

    @property
    def commit(self) -> bool:
        """Whether timed batches are committed (CPU): each worker writes every value of its batch's outputs to its
        outbox inside the parent's clocked window, is stopped before the window closes, and the parent digests the
        values itself while it is stopped (:func:`_round`). The digests then stay off the clock, where on a tiny CPU
        task they took several times the call, and the noise of that protocol time was room to hide work in (issue
        40, benchmarks/results/2026-12-05-library-docstring-figures.md). Off on CUDA (the digest is one fused kernel
        there, and values would cross to the host) and for outputs larger than :data:`COMMIT_MAX_BYTES` a batch or
        not :func:`~cudal1.harness.leaves.committable`."""
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
        n = _calls_per_batch(rep, cfg, dev)
        try:
            conf = worker.request("configure", {"baseline": cfg.baseline, "n": n,
                                                "seeds": [fresh_seed() for _ in range(n)]}, cfg.run_timeout_s)
            if conf.is_error:
                return Failure("runtime_error", conf.reason, conf.flag or "baseline_failed")
            with timed():
                alone: list[float] = []
                for _ in range(ALONE_ROUNDS + 1):
                    b = worker.request("batch", {"seeds": [fresh_seed() for _ in range(n)]}, cfg.run_timeout_s,
                                       calls=n)
                    if b.is_error:
                        return Failure("runtime_error", b.reason, b.flag or "baseline_failed")
                    alone.append(statistics.fmean(b.ms))  # a batch's mean call, as each paired round counts it
                side = cls(worker, task, rep, n, alone[1:], dev)  # the first batch warms up
                if side.tight:  # else the cached memory stays: both workers fit, and memory given back runs slower
                    worker.request("release", {}, cfg.run_timeout_s)
        except WorkerGone as e:
            return Failure("task_error", f"the task's reference process {e.ended} while timing it alone: {e.detail}",
                           "task_error")
        return side

    def record(self) -> dict[str, Any]:
        """What the set-up measured, for the store (:meth:`cudal1.harness.store.ResultStore.add_reference`)."""
        s = self.setup
        return {"ref_ms": statistics.median(self.alone_ms), "alone_ms": self.alone_ms, "calls_per_batch": self.n,
                "stateful": s.stateful, "task_check": s.task_check, "set_bytes": s.set_bytes, "out_bytes": s.out_bytes,
                "model_bytes": s.model_bytes, "peak_bytes": s.peak_bytes, "environment": s.environment}

    def close(self) -> None:
        self.worker.close()


def _calls_per_batch(setup: WorkerReport, cfg: EvalConfig, dev: str) -> int:
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


class _Run:
    """State of one pair while it runs (deadlines, observations)."""

    def __init__(self, ref: ReferenceSide, cand: WorkerProcess, task: Task, candidate: Candidate, cfg: EvalConfig,
                 obs: Observations) -> None:
        self.ref, self.cand, self.task, self.candidate, self.cfg, self.obs = ref, cand, task, candidate, cfg, obs
        self.commit = ref.commit  # the same for every round of the pair
        # CUDAL1_TIMING_DEBUG=1: records keep every call's time and every round's clocks, and the workers time the
        # steps of each batch and digest on their own clocks (``per_call.steps_ms``; nothing is decided on them: a
        # candidate could report anything there)
        self.debug = os.environ.get("CUDAL1_TIMING_DEBUG") == "1"
        self.deadline = 0.0
        self.timed: Timed = nullcontext

    def left(self) -> float:
        return max(self.deadline - time.monotonic(), 0.001)

    def load(self, extensions_dir: str | None) -> WorkerReport | None:
        """Load the task and the candidate into the candidate's process (compile time limit)."""
        ref, cfg = self.ref, self.cfg
        return self.ask_cand("load", {"task_source": self.task.source, "candidate_source": self.candidate.source,
                                      "device": _cand_device(ref.device), "seed": cfg.seed,
                                      "cpu_threads": cfg.cpu_threads, "rtol": cfg.rtol, "atol": cfg.atol,
                                      "extensions_dir": extensions_dir, "stateful": ref.stateful},
                             timeout=cfg.compile_timeout_s)

    def freeze_candidate(self, when: str = "while the reference was timed") -> bool:
        """Stop every process of the candidate's worker before the reference's timed batch (its helpers, threads and
        children must not run while the reference is timed: issue 40), or at the end of its own committed batch
        (``when`` says which, for the failure); False, with the pair failed, when they could not all be stopped."""
        if self.cand.freeze():
            return True
        self.cand.kill()
        self.obs.candidate_gone = Failure(
            "rejected", f"the candidate's processes could not all be stopped {when} (they kept "
            "running or multiplying)", "protocol_violation")
        return False

    def freeze_reference(self) -> bool:
        """Stop the reference's worker at the end of its committed batch; False, with the pair failed, when it could
        not be stopped."""
        if self.ref.worker.freeze():
            return True
        self.obs.reference_failure = Failure("runtime_error", "the reference's process could not be stopped after "
                                             "its timed batch", "harness_error")
        return False

    def digest_committed(self, which: str, batch: WorkerReport, seed: int) -> WorkerReport | None:
        """The digests of a committed batch (``which``: "ref" or "cand"), computed by the parent from the values the
        worker wrote to its outbox, while that worker is stopped; None, with the pair failed, when the records or
        the files are malformed (a candidate's: ``protocol_violation``)."""
        worker = self.cand if which == "cand" else self.ref.worker
        if len(batch.outputs) != len(batch.ms):
            outs: tuple[tuple[Leaf, ...], ...] | None = None
            why = f"{len(batch.outputs)} committed outputs for {len(batch.ms)} calls"
        else:
            try:
                outs = digest_committed(batch.outputs, worker.outbox, seed, rtol=self.cfg.rtol, atol=self.cfg.atol,
                                        reference=which == "ref")
            except (LeafError, OSError) as e:
                outs, why = None, str(e)
        if outs is not None:
            return replace(batch, outputs=outs)
        if which == "cand":
            self.cand.kill()
            self.obs.candidate_gone = Failure("rejected", f"the candidate's committed outputs are malformed: {why}",
                                              "protocol_violation")
        else:
            self.obs.reference_failure = Failure("runtime_error", f"the reference's committed outputs are malformed: "
                                                 f"{why}", "harness_error")
        return None

    def ask_ref(self, op: str, payload: dict[str, Any], calls: int | None = None) -> WorkerReport | None:
        try:
            rep = self.ref.worker.request(op, payload, max(self.left(), 30.0), calls=calls)
        except WorkerGone as e:
            self.obs.reference_failure = Failure("runtime_error", f"the reference process {e.ended} during the pair: "
                                                 f"{e.detail}", "harness_error")
            return None
        if rep.is_error:
            self.obs.reference_failure = Failure("runtime_error", f"the reference failed during the pair: {rep.reason}",
                                                 rep.flag or "harness_error")
            return None
        return rep

    def ask_cand(self, op: str, payload: dict[str, Any], timeout: float | None = None,
                 calls: int | None = None) -> WorkerReport | None:
        try:
            rep = self.cand.request(op, payload, self.left() if timeout is None else timeout, calls=calls)
        except WorkerGone as e:
            self.obs.candidate_gone = _gone(e, op, self.cfg if timeout is None else None, timeout)
            return None
        self.obs.flags.update(rep.hints.flags)
        for k, v in rep.hints.evidence.items():
            self.obs.evidence.setdefault(k, [])
            self.obs.evidence[k] = (self.obs.evidence[k] + [x for x in v if x not in self.obs.evidence[k]])[:20]
        if rep.is_error:
            self.obs.candidate_failure = _failure(rep)
            return None
        return rep


def _gone(e: WorkerGone, op: str, cfg: EvalConfig | None, timeout: float | None) -> Failure:
    if e.ended == "protocol":
        return Failure("rejected", f"the candidate's process broke the harness protocol during {op!r}: {e.detail}",
                       "protocol_violation")
    if e.ended == "timeout":
        phase = "compile (load)" if op == "load" else "run"
        limit = timeout if timeout is not None else (cfg.run_timeout_s if cfg else 0)
        return Failure("timeout", f"exceeded the {phase} time limit of {limit:g} s")
    return Failure("runtime_error", e.detail)


def run_pair(ref: ReferenceSide, cand: WorkerProcess, task: Task, candidate: Candidate, cfg: EvalConfig,
             obs: Observations, *, static: StaticReport, extensions_dir: str | None,
             timed: Timed = nullcontext, twin_worker: Callable[[], WorkerProcess] | None = None) -> None:
    """Evaluate one pair, filling ``obs`` (the caller assembles the verdict). The timing phases (the paired rounds,
    the drift re-check's) run inside ``timed()``: the pool's lane holds the device alone there
    (:meth:`cudal1.harness.gate.DeviceGate.timing`: no other lane's work, and the workers it started ahead have their
    CUDA context: creating one while another process is timed disturbs the measurement). ``twin_worker()`` gives a fresh
    candidate worker for the drift re-check (:func:`_drift_recheck`); without it a drift beyond the limit
    rejects the pair at once."""
    run = _Run(ref, cand, task, candidate, cfg, obs)
    run.timed = timed
    phases: dict[str, float] = {}
    t0 = time.monotonic()
    rep = run.load(extensions_dir)
    phases["load"] = round(time.monotonic() - t0, 3)
    if rep is None:
        return
    obs.build.update(rep.build)
    if rep.unmapped:
        obs.evidence["unmapped_parameters"] = list(rep.unmapped)
    run.deadline = time.monotonic() + cfg.run_timeout_s
    # observe last: profiling (CUPTI) can leave the candidate's process slower to launch kernels afterwards,
    # which must not count against it in timing (the reference's process is never profiled)
    for name, step in (("correctness", _correctness), ("timing", _timing), ("observe", _observe)):
        t1 = time.monotonic()
        ok = step(run)
        phases[name] = round(time.monotonic() - t1, 3)
        if name == "timing":  # the wait for the device apart from the timing itself
            phases["timing_wait"] = obs.timing.get("device_wait_s", 0.0)
            phases[name] = round(phases[name] - phases["timing_wait"], 3)
        if not ok:
            break
    failure = obs.timing_failure
    if failure is not None and failure.flag == "reference_drift" and twin_worker is not None:
        t1 = time.monotonic()
        _drift_recheck(run, twin_worker)
        phases["drift_recheck"] = round(time.monotonic() - t1, 3)
    obs.timing["phases_s"] = phases


def _cand_device(device: str) -> str:
    return "cuda:0" if device == "cuda" else device


def _correctness(run: _Run) -> bool:
    cfg, obs = run.cfg, run.obs
    worst_abs = worst_rel = 0.0
    rtol = atol = None
    # where the phase's wall time goes, on the parent's clock (each of the reference's trials, each of the
    # candidate's, the parent's comparisons): in the record for the reward-throughput work (issue 41), decided on
    # nothing. Per trial, because a fresh candidate process may pay one-time costs (library handles, lazy kernel
    # loading) in its first
    spent: dict[str, Any] = {"reference": [], "candidate": [], "judge": 0.0}
    obs.timing["correctness_s"] = spent
    for i in range(cfg.trials):
        seed, dseed, sseed = fresh_seed(), fresh_seed(), fresh_seed()
        payload = {"seed": seed, "digest_seed": dseed, "sample_seed": sseed, "name": f"trial{i}",
                   "free": run.ref.tight, "steps": run.debug}
        t0 = time.monotonic()
        r = run.ask_ref("trial", {**payload, "calls": 1}, calls=1)
        t1 = time.monotonic()
        spent["reference"].append(round(t1 - t0, 4))
        if r is None:
            return False
        c = run.ask_cand("trial", {**payload, "calls": 2}, calls=2)
        t2 = time.monotonic()
        spent["candidate"].append(round(t2 - t1, 4))
        if c is None:
            return False
        if r.steps_ms is not None and c.steps_ms is not None:  # debug runs: each worker's own clock over its trial
            spent.setdefault("steps_ms", []).append({"ref": r.steps_ms, "cand": c.steps_ms})
        for k, leaves in enumerate(c.outputs):
            t3 = time.monotonic()
            cmp = judge(list(r.outputs[0]), list(leaves), run.ref.worker.outbox, run.cand.outbox,
                        rtol=cfg.rtol, atol=cfg.atol)
            spent["judge"] = round(spent["judge"] + time.monotonic() - t3, 6)
            if not cmp.ok:
                label = "" if k == 0 else " (second call)"
                obs.incorrect = Failure("incorrect", f"trial {i + 1}{label}: {cmp.reason}")
                return False
            worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
            rtol, atol = cmp.rtol, cmp.atol
    obs.correctness = {"trials": cfg.trials, "max_abs_err": worst_abs, "max_rel_err": worst_rel, "rtol": rtol,
                       "atol_last": atol}
    return True


def _observe(run: _Run) -> bool:
    rep = run.ask_cand("observe", {"seed": fresh_seed()})
    if rep is None:
        return False
    obs = run.obs
    ref_sig = run.ref.setup.op_signature
    if ref_sig is not None and rep.op_signature == ref_sig:
        obs.flags.add("same_as_reference")
        obs.evidence.setdefault("same_as_reference", []).append(
            "operators: one call dispatched the reference's ATen operators in the same order on the same shapes")
    ref_low = set(run.ref.setup.low_precision_ops or ())
    if rep.low_precision_ops is not None:
        low = [op for op in rep.low_precision_ops if op not in ref_low]
        if low:
            obs.flags.add("reduced_precision")
            obs.evidence["low_precision_ops"] = low[:20]
    if rep.kernels is None:
        obs.uses_custom_kernel = False if run.ref.device == "cpu" else None
        return True
    from .static_checks import classify_kernels, defined_kernels, library_kernels

    src = run.candidate.source
    lib, custom = classify_kernels(list(rep.kernels), defined_kernels(src) + library_kernels(src))
    obs.evidence["kernels"] = {"library": lib[:30], "custom": custom[:30]}
    obs.uses_custom_kernel = bool(custom)
    if custom:
        obs.flags.add("uses_custom_kernel")
    return True


def _timing(run: _Run) -> bool:
    t0 = time.monotonic()
    with run.timed():  # the device alone (the pool's gate), from the monitor's start to its stop
        # waiting for other lanes' work to end and for the workers started ahead (phases_s: timing_wait)
        run.obs.timing["device_wait_s"] = round(time.monotonic() - t0, 3)
        return _paired_rounds(run)


def _paired_rounds(run: _Run) -> bool:
    cfg, obs, ref = run.cfg, run.obs, run.ref
    n = ref.n
    rng = random.Random(fresh_seed())
    if not run.ask_ref("monitor", {"action": "start"}):
        return False
    rounds = _warm_up(run, rng)
    if rounds is None:
        return False
    attempts: list[dict[str, Any]] = []
    measured: list[Attempt] = []
    for attempt in range(cfg.attempts):
        times = PairedTimes()
        events = PairedTimes()
        clocks_r: list[clockcheck.BatchClock] = []
        clocks_c: list[clockcheck.BatchClock] = []
        per_bucket = max(rounds // cfg.buckets, 1)
        to_check = {0, rounds - 1} | {b * per_bucket + rng.randrange(per_bucket) for b in range(cfg.buckets)}
        to_check |= {r for r in range(rounds) if rng.random() < CHECK_FRACTION}
        for r in range(rounds):
            res = _round(run, n, rng, check=r in to_check, times=times, events=events)
            if res is None:
                return False
            clocks_r.append(res[0])
            clocks_c.append(res[1])
        draws = PROCESS_DRAW_SD.get(ref.device, 0.0)  # two processes' own speeds, beyond these rounds' noise
        reported = summarise_rounds(times, n, cfg.buckets, cfg.spread_limit, seed=cfg.seed + attempt,
                                    process_sd=draws)
        check = clockcheck.check(clocks_r, clocks_c, reported.cand_ms, ref.device)
        charged = clockcheck.charge(check, reported.cand_ms)  # the parent's clock decides, not the candidate
        summary = summarise_rounds(times, n, cfg.buckets, cfg.spread_limit, seed=cfg.seed + attempt,
                                   cand_extra_ms=charged, process_sd=draws) if charged > 0 else reported
        drift = reference_drift(summary.ref_ms, ref.alone_ms)
        measured.append(Attempt(summary, check, drift, times, events, clocks_r, clocks_c, ref.device,
                                statistics.median(ref.alone_ms), reported.cand_ms))
        attempts.append({"rounds": rounds, "ratio_spread": summary.ratio_spread, "ref_spread": summary.ref_spread,
                         "cand_spread": summary.cand_spread, "drift": drift, "clock_excess_ms": check.excess_ms,
                         "clock_charged_ms": charged, "reported_cand_ms": reported.cand_ms,
                         "clock_margin_ms": clockcheck.statistical_margin(check), "resolved": measured[-1].resolved})
        if enough_flagrant(measured):
            break  # far beyond noise more than once: measuring again would only take longer (the pair is rejected)
        if measured[-1].passes and summary.stable and measured[-1].resolved:
            break
        if measured[-1].passes and summary.speedup_raw < SLOW_ENOUGH:
            break
        rounds = min(rounds * 2, cfg.max_rounds * 4)
    chosen = choose_attempt(measured)
    obs.timing["attempt_chosen"] = chosen
    summary, check, drift, times, events = measured[chosen].fields()
    mon = run.ask_ref("monitor", {"action": "stop"})
    clocks = mon.clocks if mon is not None else {}
    obs.timing.update({**summary.to_dict(), "attempts": attempts, "calls_per_batch": n, "buckets": cfg.buckets,
                       "baseline": cfg.baseline, "clock_check": check.to_dict(),
                       "clock_charged_ms_per_call": attempts[chosen]["clock_charged_ms"],
                       "flagrant_attempts": flagrant_count(measured),
                       "reference_alone_ms": statistics.median(ref.alone_ms), "reference_drift": drift,
                       "committed_batches": run.commit,
                       "rounds_checked": obs.timing.get("rounds_checked", 0)})
    obs.environment["clocks"] = clocks
    if events.ref and len(events.ref) == len(times.ref):  # the same calls timed with CUDA events (for comparison)
        ev = summarise_rounds(events, n, cfg.buckets, cfg.spread_limit, seed=cfg.seed)
        obs.timing["events"] = {k: ev.to_dict()[k] for k in ("ref_ms", "cand_ms", "speedup_raw", "ci", "ref_spread",
                                                              "cand_spread")}
    if run.debug:
        obs.timing["per_call"] = {"ref_ms": times.ref, "cand_ms": times.cand, "ref_event_ms": events.ref,
                                  "cand_event_ms": events.cand, "placement": times.placement,
                                  "steps_ms": times.steps}
        # every attempt's batches as the parent's clock saw them (ms per batch of n calls), for the clock check
        obs.timing["per_round_clock"] = {"columns": ["ref_parent", "ref_reported", "cand_parent", "cand_reported"],
                                         "attempts": [[[r.parent_ms, r.reported_ms, c.parent_ms, c.reported_ms]
                                                       for r, c in zip(a.ref_clocks, a.cand_clocks, strict=True)]
                                                      for a in measured]}
    if not summary.stable:
        obs.flags.add("timing_unstable")
    if not measured[chosen].resolved:
        obs.flags.add("timing_unresolved")
    if clocks.get("throttled"):
        obs.flags.add("gpu_throttled")
    obs.summary = summary
    clock = clock_rejection(measured, chosen)
    if clock is not None:  # flagrant excesses in enough attempts, or the reported attempt's own excess
        obs.timing_failure = Failure(
            "rejected", f"the parent's clock saw {clock.excess_ms:.4g} ms per call more around the candidate's "
            f"batches than the candidate's process reported, beyond the reference's overhead (allowance "
            f"{clock.allowance_ms:.4g} ms): work outside its timed calls, or forged times", "timing_disagrees")
    elif drift > drift_limit(summary, ref.device, statistics.median(ref.alone_ms)):
        obs.timing_failure = Failure(
            "rejected", f"the reference ran {100 * drift:.0f}% slower beside this candidate ({summary.ref_ms:.4g} ms) "
            f"than alone ({statistics.median(ref.alone_ms):.4g} ms): something of the candidate kept the "
            f"{'GPU' if ref.device == 'cuda' else 'machine'} busy", "reference_drift")
    return True


def _drift_recheck(run: _Run, twin_worker: Callable[[], WorkerProcess]) -> None:
    """Re-check a ``reference_drift`` rejection against a yardstick taken in the same conditions as the pairing.

    The reference's time *alone* is a few batches back to back at set-up. Beside any partner the reference's
    batches alternate with another process on the lane's cores, and on launch-bound tasks that alone can move its
    host time a long way (95_CrossEntropyLoss's reference against a copy of itself ran well slower than alone;
    benchmarks/results/2026-11-27-kernelbench-v0-pinned-h100.md), and the host's speed swings between set-up and
    the pair. So before rejecting: the candidate's process is killed (with its descendants, process group and
    cgroup, :meth:`WorkerProcess.kill`: whatever it started, and its GPU context, are gone), and the reference is
    timed again in paired rounds beside a twin (a fresh worker running the task's reference,
    :func:`reference_candidate`), as many rounds as :func:`_rounds_for` gives. The pair stays rejected unless the
    reference's paired time beside the candidate is within :func:`drift_limit` of its time beside the twin; the
    rejection stands as well when the twin cannot be run. What a candidate does to slow the reference only while it
    is loaded (a helper process keeping the GPU busy, a spinning thread on the lane's cores) ends with its process,
    so the twin's yardstick is free of it.

    Fills ``obs.timing["drift_recheck"]`` with what was measured; clears ``obs.timing_failure`` only when the
    re-check clears the candidate."""
    obs, cfg, ref = run.obs, run.cfg, run.ref
    summary = obs.summary
    assert summary is not None and obs.timing_failure is not None
    run.cand.kill(wait=True)  # reaped: its descendants (its sandbox's PID namespace) and GPU context are gone
    info: dict[str, Any] = {"paired_ref_ms": summary.ref_ms}
    obs.timing["drift_recheck"] = info
    twin = twin_worker()
    twin_obs = Observations(task=obs.task, task_hash=obs.task_hash, candidate_hash="", baseline=obs.baseline,
                            device=obs.device)
    trun = _Run(ref, twin, run.task, reference_candidate(run.task), cfg, twin_obs)
    trun.deadline = time.monotonic() + cfg.run_timeout_s
    try:
        if trun.load(None) is None:
            info["error"] = _twin_error(twin_obs)
            return
        with run.timed():
            rng = random.Random(fresh_seed())
            rounds = _warm_up(trun, rng)
            if rounds is None:
                info["error"] = _twin_error(twin_obs)
                return
            times = PairedTimes()
            for _ in range(rounds):
                if _round(trun, ref.n, rng, check=False, times=times) is None:
                    info["error"] = _twin_error(twin_obs)
                    return
    finally:
        twin.close()
    if twin_obs.reference_failure is not None:
        obs.reference_failure = twin_obs.reference_failure
        return
    twin_summary = summarise_rounds(times, ref.n, cfg.buckets, cfg.spread_limit, seed=cfg.seed)
    drift = reference_drift(summary.ref_ms, [twin_summary.ref_ms])
    limit = drift_limit(summary, ref.device, twin_summary.ref_ms)
    info.update({"rounds": rounds, "twin_ref_ms": twin_summary.ref_ms, "twin_ms": twin_summary.cand_ms,
                 "twin_speedup": twin_summary.speedup_raw, "drift": drift, "limit": limit, "cleared": drift <= limit})
    if drift <= limit:
        obs.timing_failure = None
        if twin_summary.speedup_raw > 1.0 + limit:
            # not the candidate's doing, but the reference's process ran slower than a copy of itself in a candidate
            # worker: something outside the pair slowed the reference (issue 40: 270x for an honest rewrite on a
            # loaded 2-core machine), and the speedup measured beside the candidate is inflated by as much
            obs.flags.add("reference_slowed")
            obs.evidence["reference_slowed"] = [
                f"beside a copy of itself the reference took {twin_summary.ref_ms:.4g} ms a call and the copy "
                f"{twin_summary.cand_ms:.4g} ms ({twin_summary.speedup_raw:.2f}x), alone at set-up "
                f"{statistics.median(ref.alone_ms):.4g} ms"]
    else:
        obs.timing_failure = Failure(
            "rejected", f"{obs.timing_failure.reason}; re-checked beside a copy of the reference after the "
            f"candidate's process was killed, the reference ran {twin_summary.ref_ms:.4g} ms, so it still ran "
            f"{100 * drift:.0f}% slower beside the candidate", "reference_drift")


def _twin_error(twin_obs: Observations) -> str:
    f = (twin_obs.reference_failure or twin_obs.candidate_gone or twin_obs.candidate_failure or twin_obs.incorrect)
    return f.reason if f is not None else "the twin ended"


def _warm_up(run: _Run, rng: random.Random) -> int | None:
    """Untimed paired rounds (builds, autotuning, caches), at least two so that a first call's compilation does
    not size the rounds; returns the rounds the last of them sizes (:func:`_rounds_for`), or None when the pair
    ended."""
    warm = None
    for _ in range(max(2, -(-run.cfg.warmup // run.ref.n))):
        warm = _round(run, run.ref.n, rng, check=False)
        if warm is None:
            return None
    assert warm is not None
    return _rounds_for(warm[0].parent_ms + warm[1].parent_ms, run.cfg)


def _rounds_for(per_round_ms: float, cfg: EvalConfig) -> int:
    """Rounds that fill ``time_budget_s`` of the parent's clock (both batches, their digests and messages)."""
    want = int(cfg.time_budget_s * 1000.0 / max(per_round_ms, 1e-6))
    n = max(cfg.min_rounds, min(cfg.max_rounds, want))
    return -(-n // cfg.buckets) * cfg.buckets


def _round(run: _Run, n: int, rng: random.Random, *, check: bool, times: PairedTimes | None = None,
           events: PairedTimes | None = None) -> tuple[clockcheck.BatchClock, clockcheck.BatchClock] | None:
    """One paired round; returns the two batches' clocks (reference, candidate), or None when the pair ended."""
    seeds = [fresh_seed() for _ in range(n)]
    commit = run.commit
    order = ("ref", "cand") if rng.random() < 0.5 else ("cand", "ref")
    got: dict[str, tuple[WorkerReport, WorkerReport, float]] = {}
    dseed = None
    picked: tuple[int, int] | None = None  # (call, sample seed) whose output a check round fetches in full
    fetched: dict[str, WorkerReport] = {}
    for which in order:
        ask = run.ask_ref if which == "ref" else run.ask_cand
        # one worker on the machine at a time: the other is stopped while a batch is on the parent's clock (the
        # candidate's helpers must not run beside the reference; the reference is stopped beside the candidate so
        # that both windows start after the same parent work and the clock check compares like with like)
        if which == "ref" and not run.freeze_candidate():
            return None
        if which == "cand":
            run.ref.worker.freeze()
        try:
            # a tight task's workers give their GPU memory back after each batch; it is taken back, and given back
            # again, outside the parent's clock: cudaMalloc and cudaFree of gigabytes swing by tens of ms on an H200
            # (benchmarks/results/2026-11-29-harness-timing-h200.md), noise the clock check would compare and charge
            if run.ref.tight and ask("rewarm", {}) is None:
                return None
            t0 = time.monotonic()
            b = ask("batch", {"seeds": seeds, "commit": commit, "steps": run.debug}, calls=n)
            if b is None:
                return None
            if commit:  # the window closes once every process of the worker is seen stopped: nothing it runs after
                # its reply (a thread, a helper, a signal handler) can still write the committed values
                if not (run.freeze_candidate("at the end of its committed batch") if which == "cand"
                        else run.freeze_reference()):
                    return None
                ms = (time.monotonic() - t0) * 1000.0
            if dseed is None:
                dseed = fresh_seed()  # after the first batch's calls; both digest with the same weights
            if commit:
                d = run.digest_committed(which, b, dseed)
                (run.cand if which == "cand" else run.ref.worker).thaw()
                if d is None:
                    return None
            else:
                d = ask("digest", {"seed": dseed, "steps": run.debug}, calls=n)
                if d is None:
                    return None
                ms = (time.monotonic() - t0) * 1000.0
            got[which] = (b, d, ms)
            if check:  # one output, chosen after the first batch's calls, fetched before this worker lets go of it
                if picked is None:
                    picked = (rng.randrange(n), fresh_seed())
                o = ask("outputs", {"indices": [picked[0]], "sample_seed": picked[1], "name": "timed",
                                    "free": run.ref.tight}, calls=1)
                if o is None:
                    return None
                fetched[which] = o
            elif run.ref.tight and ask("release", {}) is None:
                return None
        finally:
            (run.cand if which == "ref" else run.ref.worker).thaw()
    (rb, rd, rp), (cb, cd, cp) = got["ref"], got["cand"]
    if run.ask_cand("check", {}) is None:  # the candidate's in-process checks, outside the clocked window
        return None
    cfg = run.cfg
    for j in range(n):
        cmp = judge(list(rd.outputs[j]), list(cd.outputs[j]), run.ref.worker.outbox, run.cand.outbox,
                    rtol=cfg.rtol, atol=cfg.atol, check_samples=False)
        if not cmp.ok:
            run.obs.incorrect = Failure("incorrect", f"a timed call's output differs from the reference's on the same "
                                        f"inputs: {cmp.reason}", "timed_output_mismatch")
            return None
    if check:
        cmp = judge(list(fetched["ref"].outputs[0]), list(fetched["cand"].outputs[0]), run.ref.worker.outbox,
                    run.cand.outbox, rtol=cfg.rtol, atol=cfg.atol, check_digests=False)
        if not cmp.ok:
            run.obs.incorrect = Failure("incorrect", f"the output of a timed call differs from the reference's on "
                                        f"the same inputs: {cmp.reason}", "timed_output_mismatch")
            return None
        run.obs.timing["rounds_checked"] = run.obs.timing.get("rounds_checked", 0) + 1
    if times is not None:
        times.ref.extend(rb.ms)
        times.cand.extend(cb.ms)
        if rb.placement is not None and cb.placement is not None:
            times.placement.append({"ref": rb.placement, "cand": cb.placement})
        if rb.steps_ms is not None and cb.steps_ms is not None:  # each worker's own clock over its batch's steps
            times.steps.append({"ref": {**rb.steps_ms, **(rd.steps_ms or {})},
                                "cand": {**cb.steps_ms, **(cd.steps_ms or {})}})
        if rb.event_ms is not None and cb.event_ms is not None and events is not None:
            events.ref.extend(rb.event_ms)
            events.cand.extend(cb.event_ms)
    return (clockcheck.BatchClock(rp, sum(rb.ms), n), clockcheck.BatchClock(cp, sum(cb.ms), n))
