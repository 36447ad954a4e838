"""One (task, candidate) pair across two processes, driven and judged by the parent.

* :class:`~cudal1.harness.reference_side.ReferenceSide` (:mod:`cudal1.harness.reference_side`): the clean reference
  worker of one task (it never sees candidate code), set up once per task and lane, with the reference's time
  measured alone before any candidate of the task is loaded (the drift check's yardstick).
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
     (:func:`cudal1.harness.drift_recheck.drift_recheck`). The candidate's process is killed (with every process of
     its sandbox), and the reference is timed again in paired rounds beside a *twin*, a fresh worker running the
     task's own reference; the pair is rejected ``reference_drift`` only if the reference also ran slower beside the
     candidate than beside its twin.

The pair's state and one paired round are :mod:`cudal1.harness.rounds`'s. Everything ends in
:class:`cudal1.harness.verdict.Observations`; :func:`cudal1.harness.verdict.assemble`
makes the result.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from . import clockcheck, cpu_wait
from .attempts import (
    ERRATIC_SPREAD,
    Attempt,
    choose_attempt,
    clock_rejection,
    drift_limit,
    enough_flagrant,
    erratic,
    flagrant_count,
    reference_drift,
)
from .config import EvalConfig
from .drift_recheck import drift_recheck
from .leaves import judge
from .novelty import behaviour_identity
from .process import WorkerGone, WorkerProcess
from .reference_side import ReferenceSide, Timed, fresh_seed
from .rounds import CHECK_FRACTION, PairRun, paired_round, warm_up
from .static_checks import StaticReport
from .timing import PROCESS_DRAW_SD, PairedTimes, summarise_rounds
from .types import Candidate, Task
from .verdict import Failure, Observations

__all__ = ["ReferenceSide", "run_pair"]

#: a candidate measured this much slower than the reference (speedup below it) is not measured again for a steadier
#: figure: a candidate 600 times slower than a 0.03 ms CPU reference took 0.64 s a batch and ran its pair past a
#: 20 s limit on two loaded cores; every check of the attempt still applies, and no figure that low is paid
SLOW_ENOUGH = 0.1




def run_pair(ref: ReferenceSide, cand: WorkerProcess, task: Task, candidate: Candidate, cfg: EvalConfig,
             obs: Observations, *, static: StaticReport, extensions_dir: str | None,
             timed: Timed = nullcontext, twin_worker: Callable[[], WorkerProcess] | None = None) -> None:
    """Evaluate one pair, filling ``obs`` (the caller assembles the verdict). The timing phases (the paired rounds,
    the drift re-check's) run inside ``timed()``: the pool's lane holds the device alone there
    (:meth:`cudal1.harness.gate.DeviceGate.timing`: no other lane's work, and the workers it started ahead have
    their CUDA context: creating one while another process is timed disturbs the measurement). ``twin_worker()``
    gives a fresh candidate worker for the drift re-check (:func:`cudal1.harness.drift_recheck.drift_recheck`);
    without it a drift beyond the limit rejects the pair at once."""
    run = PairRun(ref, cand, task, candidate, cfg, obs)
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
        drift_recheck(run, twin_worker)
        phases["drift_recheck"] = round(time.monotonic() - t1, 3)
    obs.timing["phases_s"] = phases


def _correctness(run: PairRun) -> bool:
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


def _observe(run: PairRun) -> bool:
    rep = run.ask_cand("observe", {"seed": fresh_seed()})
    if rep is None:
        return False
    obs = run.obs
    ref_sig = run.ref.setup.op_signature
    # what the candidate does, whatever its source (novelty.behaviour_identity): a trainer compares it with the
    # exemplars its prompt showed
    obs.evidence["behaviour"] = behaviour_identity(rep.op_signature, rep.kernels)
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


def _timing(run: PairRun) -> bool:
    t0 = time.monotonic()
    with run.timed():  # the device alone (the pool's gate), from the monitor's start to its stop
        # waiting for other lanes' work to end and for the workers started ahead (phases_s: timing_wait)
        run.obs.timing["device_wait_s"] = round(time.monotonic() - t0, 3)
        return _paired_rounds(run)


def _wait_text(wait: cpu_wait.Wait | None) -> str:
    return "(not measured)" if wait is None else f"{100 * wait.share:.0f}% ({wait.ms:.1f} ms)"


def _time_alone_again(run: PairRun) -> bool:
    """The reference's yardstick was taken while its threads waited for a core (:mod:`cudal1.harness.cpu_wait`):
    take it again now, with the candidate's processes stopped; False, with the pair failed, when that failed."""
    if not run.freeze_candidate("while the reference was timed alone"):
        return False
    try:
        failed = run.ref.time_alone(run.cfg)
    except WorkerGone as e:
        failed = Failure("runtime_error", f"the reference process {e.ended} while timing it alone: {e.detail}",
                         "harness_error")
    finally:
        run.cand.thaw()
    if failed is not None:
        run.obs.reference_failure = failed
        return False
    return True


def _paired_rounds(run: PairRun) -> bool:
    cfg, obs, ref = run.cfg, run.obs, run.ref
    n = ref.n
    rng = random.Random(fresh_seed())
    if not run.ask_ref("monitor", {"action": "start"}):
        return False
    if ref.alone_contended and not _time_alone_again(run):
        return False
    rounds = warm_up(run, rng)
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
            res = paired_round(run, n, rng, check=r in to_check, times=times, events=events)
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
        waited = (cpu_wait.measure(sum(times.ref_wait_ms), sum(times.ref_batch_ms), ref.threads)
                  if times.ref_batch_ms else None)
        measured.append(Attempt(summary, check, drift, times, events, clocks_r, clocks_c, ref.device,
                                statistics.median(ref.alone_ms), reported.cand_ms, waited))
        attempts.append({"rounds": rounds, "ratio_spread": summary.ratio_spread, "ref_spread": summary.ref_spread,
                         "cand_spread": summary.cand_spread, "drift": drift, "clock_excess_ms": check.excess_ms,
                         "clock_charged_ms": charged, "reported_cand_ms": reported.cand_ms,
                         "clock_margin_ms": clockcheck.statistical_margin(check), "resolved": measured[-1].resolved,
                         "ref_cpu_wait": waited.share if waited else None,
                         "ref_cpu_waited_ms": waited.ms if waited else None})
        if enough_flagrant(measured):
            break  # far beyond noise more than once: measuring again would only take longer (the pair is rejected)
        if measured[-1].contended:
            pass  # the machine had no core free for the reference: measure again (cpu_wait.py)
        elif measured[-1].passes and summary.stable and measured[-1].resolved:
            break
        elif measured[-1].passes and summary.speedup_raw < SLOW_ENOUGH:
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
                       "reference_cpu_wait": attempts[chosen]["ref_cpu_wait"],
                       "reference_alone_cpu_wait": ref.alone_wait.share if ref.alone_wait else None,
                       "reference_alone_cpu_waited_ms": ref.alone_wait.ms if ref.alone_wait else None,
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
    if erratic(summary):  # a speedup from buckets whose speedups lie wider apart than the speedup itself
        obs.flags.add("timing_erratic")
        every = ", ".join(f"{a['ratio_spread']:.3g}" for a in attempts)
        obs.evidence["timing_erratic"] = [
            f"the reported attempt's bucket speedups spread {summary.ratio_spread:.3g} of their median (limit "
            f"{ERRATIC_SPREAD:g}; every attempt's: {every})"]
    if measured[chosen].contended or ref.alone_contended:
        obs.flags.add("cpu_contended")
        paired, alone = measured[chosen].cpu_wait, ref.alone_wait
        obs.evidence["cpu_contended"] = [
            f"each of the reference's threads waited for a CPU core {_wait_text(paired)} of its timed batches (alone: "
            f"{_wait_text(alone)}; limit {100 * cpu_wait.WAIT_LIMIT:.0f}% and {cpu_wait.WAIT_FLOOR_MS:g} ms): "
            "another program's load, or more torch threads than free cores (EvalConfig.cpu_threads)"]
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
