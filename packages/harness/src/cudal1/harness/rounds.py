"""One pair while it runs (:class:`PairRun`: its two workers, deadlines and observations) and its paired rounds
(:func:`paired_round`: one batch of each worker on the parent's clock, the other stopped, digests compared, some
outputs fetched in full), for :mod:`cudal1.harness.pair` and the drift re-check (:mod:`cudal1.harness.drift_recheck`).
"""

from __future__ import annotations

import os
import random
import time
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from . import clockcheck
from .config import EvalConfig
from .leaves import Leaf, LeafError, digest_committed, judge
from .process import WorkerGone, WorkerProcess
from .protocol import WorkerReport
from .reference_side import ReferenceSide, Timed, fresh_seed
from .timing import PairedTimes
from .types import Candidate, Task
from .verdict import Failure, Observations

CHECK_FRACTION = 0.10  #: rounds whose chosen output is fetched and compared in full (at least one per bucket)


def _failure(rep: WorkerReport) -> Failure:
    return Failure(rep.status, rep.reason, rep.flag)


class PairRun:
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


def _cand_device(device: str) -> str:
    return "cuda:0" if device == "cuda" else device


def warm_up(run: PairRun, rng: random.Random) -> int | None:
    """Untimed paired rounds (builds, autotuning, caches), at least two so that a first call's compilation does
    not size the rounds; returns the rounds the last of them sizes (:func:`rounds_for`), or None when the pair
    ended."""
    warm = None
    for _ in range(max(2, -(-run.cfg.warmup // run.ref.n))):
        warm = paired_round(run, run.ref.n, rng, check=False)
        if warm is None:
            return None
    assert warm is not None
    return rounds_for(warm[0].parent_ms + warm[1].parent_ms, run.cfg)


def rounds_for(per_round_ms: float, cfg: EvalConfig) -> int:
    """Rounds that fill ``time_budget_s`` of the parent's clock (both batches, their digests and messages)."""
    want = int(cfg.time_budget_s * 1000.0 / max(per_round_ms, 1e-6))
    n = max(cfg.min_rounds, min(cfg.max_rounds, want))
    return -(-n // cfg.buckets) * cfg.buckets


def paired_round(run: PairRun, n: int, rng: random.Random, *, check: bool, times: PairedTimes | None = None,
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
            w0 = run.ref.waited_ns() if which == "ref" and times is not None else None
            t0 = time.monotonic()
            b = ask("batch", {"seeds": seeds, "commit": commit, "steps": run.debug}, calls=n)
            if b is None:
                return None
            if w0 is not None and times is not None:  # the reference's wait for a core in its batch (cpu_wait.py)
                batch_ms = (time.monotonic() - t0) * 1000.0
                if (w1 := run.ref.waited_ns()) is not None:
                    times.ref_wait_ms.append((w1 - w0) / 1e6)
                    times.ref_batch_ms.append(batch_ms)
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
