"""The drift re-check: before a pair is rejected ``reference_drift``, the reference is timed again beside a twin
(a fresh worker running the task's own reference) once the candidate's process is gone (:func:`drift_recheck`).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from .attempts import drift_limit, reference_drift
from .process import WorkerProcess
from .reference_side import fresh_seed
from .rounds import PairRun, paired_round, warm_up
from .suite import reference_candidate
from .timing import PairedTimes, summarise_rounds
from .verdict import Failure, Observations


def drift_recheck(run: PairRun, twin_worker: Callable[[], WorkerProcess]) -> None:
    """Re-check a ``reference_drift`` rejection against a yardstick taken in the same conditions as the pairing.

    The reference's time *alone* is a few batches back to back at set-up. Beside any partner the reference's
    batches alternate with another process on the lane's cores, and on launch-bound tasks that alone can move its
    host time a long way (95_CrossEntropyLoss's reference against a copy of itself ran well slower than alone;
    benchmarks/results/2026-11-27-kernelbench-v0-pinned-h100.md), and the host's speed swings between set-up and
    the pair. So before rejecting: the candidate's process is killed (with its descendants, process group and
    cgroup, :meth:`WorkerProcess.kill`: whatever it started, and its GPU context, are gone), and the reference is
    timed again in paired rounds beside a twin (a fresh worker running the task's reference,
    :func:`reference_candidate`), as many rounds as :func:`rounds_for` gives. The pair stays rejected unless the
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
    trun = PairRun(ref, twin, run.task, reference_candidate(run.task), cfg, twin_obs)
    trun.deadline = time.monotonic() + cfg.run_timeout_s
    try:
        if trun.load(None) is None:
            info["error"] = _twin_error(twin_obs)
            return
        with run.timed():
            rng = random.Random(fresh_seed())
            rounds = warm_up(trun, rng)
            if rounds is None:
                info["error"] = _twin_error(twin_obs)
                return
            times = PairedTimes()
            for _ in range(rounds):
                if paired_round(trun, ref.n, rng, check=False, times=times) is None:
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
