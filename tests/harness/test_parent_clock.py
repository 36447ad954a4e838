"""The parent's clock check (:mod:`cudal1.harness.clockcheck`) and the choice of a pair's attempt: work outside the
reported times is charged, noise is not beyond its cap, a figure the clock cannot resolve is not trusted."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from cudal1.harness.clockcheck import SIGMAS, BatchClock, check
from cudal1.harness.timing import PairedTimes


def _clocks(gap_ms: float, calls: int = 8, rounds: int = 20, ms: float = 1.0, seed: int = 0) -> list[BatchClock]:
    rng = random.Random(seed)
    return [BatchClock(ms * calls + gap_ms * calls + rng.uniform(-0.05, 0.05), ms * calls, calls) for _ in range(rounds)]


def test_clock_check_fails_work_outside_the_reported_times_and_passes_noise():
    ref = _clocks(0.5)
    assert not check(ref, _clocks(0.5, seed=1), cand_ms=1.0, device="cuda").disagrees
    hidden = check(ref, _clocks(0.5 + 0.4, seed=2), cand_ms=1.0, device="cuda")  # 0.4 ms per call not reported
    assert hidden.disagrees and hidden.excess_ms == pytest.approx(0.4, abs=0.02)
    assert not check(ref, _clocks(0.45, seed=3), cand_ms=1.0, device="cuda").disagrees  # less overhead: fine


# protocol time per call (ms: the parent's clock less the reported calls) of each worker, round by round, in the chosen
# attempt of the H200 self-pair of l2_normalize (2026-12-04, benchmarks/results/2026-12-04-harness-timing-h200/)
L2_REF_GAPS = [3.25, 3.37, 3.31, 4.82, 4.9, 3.56, 4.14, 4.44, 4.25, 4.57, 4.49, 5.0, 4.62, 3.26, 3.36, 3.28, 4.73, 4.69,
               4.53, 3.21, 3.2, 3.11, 3.28, 4.14, 4.05, 3.94, 3.82, 4.17, 4.25, 3.74, 3.28, 3.91, 3.97, 3.38, 3.26, 3.39,
               3.28, 3.36, 3.21, 5.02, 3.22, 3.18, 3.45, 3.25, 3.15, 3.2, 3.6, 3.24, 3.3, 3.12, 3.27, 3.44, 3.49, 3.29,
               3.32, 4.55, 4.56, 4.57, 4.35, 4.22]
L2_CAND_GAPS = [5.15, 4.98, 4.57, 4.79, 4.47, 4.91, 4.55, 4.56, 4.95, 4.86, 4.91, 47.01, 3.99, 3.38, 3.44, 5.0, 4.99,
                4.88, 4.89, 3.33, 3.35, 3.17, 3.32, 3.36, 3.48, 3.43, 4.42, 4.51, 46.73, 3.35, 4.15, 3.93, 4.0, 3.31, 3.2,
                3.68, 3.45, 3.38, 4.7, 4.65, 4.86, 3.31, 3.33, 3.42, 3.4, 3.28, 3.43, 3.43, 3.68, 3.24, 3.39, 3.25, 3.54,
                4.02, 3.45, 4.79, 4.88, 4.77, 4.83, 4.85]


def test_a_reference_whose_protocol_runs_at_two_speeds_widens_the_rejection_allowance():
    """Legitimate (an H200 self-pair of ``l2_normalize``, 2026-12-04, its measured gaps): both processes' protocol
    time per call ran at about 3.3, 4.2 and 4.8 ms, each in streaks of several rounds; the candidate, an exact copy,
    was in the slow streaks more often, and its median excess passed four standard errors of the paired differences
    (it was rejected, ``timing_disagrees``). The reference's own spread is counted: not rejected (the charge still
    applies beyond its margin). Adversarial twin: the same gaps with 1 ms a call hidden outside the reported times
    are rejected."""
    ref = [BatchClock(9 * (2.14 + g), 9 * 2.14, 9) for g in L2_REF_GAPS]
    honest = check(ref, [BatchClock(9 * (2.14 + g), 9 * 2.14, 9) for g in L2_CAND_GAPS], cand_ms=2.14, device="cuda")
    assert honest.excess_ms > 0.1 and honest.excess_ms > SIGMAS * honest.se_ms  # rejected before
    assert not honest.disagrees and honest.allowance_ms >= SIGMAS * honest.ref_se_ms
    hidden = check(ref, [BatchClock(9 * (2.14 + g + 1.0), 9 * 2.14, 9) for g in L2_CAND_GAPS], cand_ms=2.14,
                   device="cuda")
    assert hidden.disagrees


def _attempt(excess: float, drift: float, ratio_spread: float, stable: bool):
    from cudal1.harness.attempts import Attempt
    from cudal1.harness.clockcheck import ClockCheck
    from cudal1.harness.timing import TimingSummary

    s = TimingSummary(ref_ms=0.2, cand_ms=0.1, speedup_raw=2.0, speedup=2.0, ci=(1.9, 2.1), ref_bucket_ms=[0.2],
                      cand_bucket_ms=[0.1], ref_spread=0.05, cand_spread=0.05, rounds=40, stable=stable,
                      ratio_spread=ratio_spread)
    return Attempt(s, ClockCheck(excess, 0.03, 0.1, 0.1 + excess, 40), drift, PairedTimes(), PairedTimes())


def test_a_pair_reports_an_attempt_that_passed_both_timing_checks():
    from cudal1.harness.attempts import choose_attempt

    honest_unstable, slowed, stable = _attempt(0.0, 0.20, 0.3, False), _attempt(0.0, 0.40, 0.05, True), \
        _attempt(0.01, 0.05, 0.05, True)
    # legitimate: the host slowed down after an honest first attempt; its figures are reported (timing_unstable)
    assert choose_attempt([honest_unstable, slowed, slowed]) == 0
    assert choose_attempt([honest_unstable, stable]) == 1  # a stable passing attempt is preferred
    # adversarial: an attempt whose reported times the parent's clock contradicts is never reported, however
    # stable it is; none passing -> the last attempt, whose failed check rejects the pair
    forged = _attempt(0.2, 0.0, 0.01, True)
    assert choose_attempt([forged, honest_unstable]) == 1
    assert choose_attempt([forged, slowed]) == 1 and not slowed.passes and forged.flagrant
    assert choose_attempt([_attempt(0.2, 0.0, 0.01, True), _attempt(0.05, 0.0, 0.01, True)]) == 1


def test_noise_left_uncharged_is_at_most_a_tenth_of_a_cpu_call_and_a_quarter_of_a_cuda_call():
    """Adversarial: a candidate reporting 0.001 ms for a call the parent's clock saw take 0.03 ms, on a machine whose
    noise is 0.012 ms a call (resolved: under half the call), is charged all but a tenth of the call on CPU (a quarter
    on CUDA), not all but the noise (with a quarter on CPU such a forger read 1.66x, verified, on CI's runner,
    2026-12-06). Legitimate twin: an honest candidate on the same machine is charged nothing for an excess within the
    cap."""
    from cudal1.harness.clockcheck import ClockCheck, charge, resolved

    forge = ClockCheck(0.029, 1.0, 0.09, 0.119, 30, se_ms=0.006, ref_se_ms=0.005, device="cpu")
    assert resolved(forge, 0.001)
    assert charge(forge, 0.001) == pytest.approx(0.029 - 0.1 * 0.030, abs=1e-6)
    assert charge(replace(forge, device="cuda"), 0.001) == pytest.approx(0.029 - 0.25 * 0.030, abs=1e-6)
    assert charge(replace(forge, device="tpu"), 0.001) == pytest.approx(0.029 - 0.012, abs=1e-6)  # unnamed: no cap
    honest = ClockCheck(0.003, 1.0, 0.09, 0.093, 30, se_ms=0.006, ref_se_ms=0.005, device="cpu")
    assert charge(honest, 0.03) == 0.0
    assert charge(replace(honest, excess_ms=0.005), 0.03) == pytest.approx(0.005 - 0.1 * 0.035, abs=1e-6)  # beyond


def test_a_figure_the_parents_clock_cannot_resolve_is_not_trusted():
    """Adversarial (measured 2026-12-04 on the 2-core VM under outside load): a candidate reporting its 0.035 ms calls
    as 0.001 ms, whose batches' noise left 0.024 ms a call uncharged, read 2.2x; the margin is most of its time as
    the parent's clock saw it, so the figure is unresolved. Legitimate twin, the same machine quiet: an honest 0.034 ms
    candidate with a margin of 0.004 ms is resolved. The same rule on CUDA: an H200 built-in self-pair (``hardswish``,
    2026-11-29: 1.20 ms calls, protocol noise 1.07 ms a call over 10 rounds) is unresolved; its twin with the
    median task's noise (0.025 of the call) is resolved."""
    from cudal1.harness.attempts import choose_attempt
    from cudal1.harness.clockcheck import ClockCheck, resolved, statistical_margin

    loaded_forge = ClockCheck(0.038, 1.0, 0.09, 0.128, 15, se_ms=0.012, ref_se_ms=0.006, device="cpu")
    assert statistical_margin(loaded_forge) == pytest.approx(0.024, abs=0.001)
    assert not resolved(loaded_forge, 0.001)
    quiet_honest = ClockCheck(0.003, 1.0, 0.09, 0.093, 30, se_ms=0.002, ref_se_ms=0.0015, device="cpu")
    assert resolved(quiet_honest, 0.034)
    assert not resolved(replace(loaded_forge, device="cuda"), 0.001)
    noisy_h200 = ClockCheck(0.164, 1.0, 5.107, 5.271, 10, se_ms=0.4, ref_se_ms=0.53, device="cuda")
    assert statistical_margin(noisy_h200) == pytest.approx(1.06, abs=0.01) and not resolved(noisy_h200, 1.199)
    assert resolved(replace(noisy_h200, se_ms=0.01, ref_se_ms=0.015), 1.199)
    # an attempt the clock resolved is reported before an earlier stable one it did not
    unresolved, fine = _attempt(0.0, 0.0, 0.05, True), _attempt(0.0, 0.0, 0.05, True)
    unresolved.check, unresolved.reported_ms = loaded_forge, 0.001
    fine.check = replace(fine.check, device="cpu")
    assert not unresolved.resolved and fine.resolved
    assert choose_attempt([unresolved, fine]) == 1 and choose_attempt([unresolved]) == 0


def test_one_flagrant_attempt_beside_a_passing_one_does_not_reject_but_two_do():
    from cudal1.harness.attempts import choose_attempt, clock_rejection, enough_flagrant

    def verdict(attempts):
        return clock_rejection(attempts, choose_attempt(attempts))

    honest, burst = _attempt(0.0, 0.05, 0.05, True), _attempt(0.12, 0.0, 0.05, True)  # allowance 0.03
    assert burst.flagrant and not burst.passes and not enough_flagrant([burst])
    # legitimate: an honest pair whose host stalled through one attempt (2026-11-27, H100: -0.024 ms per call of
    # excess, then +0.122 against an allowance of 0.02) reports its passing attempt instead of being rejected
    assert verdict([burst, honest]) is None and choose_attempt([burst, honest]) == 1
    assert verdict([honest, burst]) is None and choose_attempt([honest, burst]) == 0
    # adversarial: work outside the timed calls shows in every attempt: two flagrant attempts reject the pair even
    # beside a passing one (the loop stops measuring there), and an excess above the allowance in every attempt
    # rejects it through the reported attempt's own check
    assert enough_flagrant([burst, honest, burst])
    rejected = verdict([burst, honest, _attempt(0.2, 0.0, 0.05, True)])
    assert rejected is not None and rejected.excess_ms == pytest.approx(0.2)
    steady = _attempt(0.05, 0.0, 0.05, True)  # 0.05 > 0.03, under twice it: never flagrant
    assert not steady.flagrant and verdict([steady, steady, steady]) is steady.check
    assert verdict([burst]) is burst.check  # a single attempt measured: nothing passed


def test_a_round_is_timed_by_its_mean_call_and_the_clock_excess_is_charged():
    """Issue 40's two figures rules, on synthetic rounds: work moved between the calls of a batch (seven nearly
    empty calls, then one that does all eight calls' work) has the honest batch's figure, where per-call medians
    paid it 8x and more; and the parent's clock excess is added to the candidate's time beyond 2% of it."""
    from cudal1.harness.clockcheck import CHARGE_MARGIN, charge
    from cudal1.harness.timing import summarise_rounds

    n, rounds = 8, 40
    honest = PairedTimes(ref=[1.0] * n * rounds, cand=[0.5] * n * rounds)
    shifted = PairedTimes(ref=[1.0] * n * rounds, cand=([0.5] + [0.001] * (n - 2) + [0.5 * (n - 1)]) * rounds)
    a, b = summarise_rounds(honest, n, 5, 0.1), summarise_rounds(shifted, n, 5, 0.1)
    assert a.speedup == 2.0 and abs(b.speedup_raw - 2.0) < 0.01
    ref = _clocks(0.5)
    forged = [BatchClock(c.parent_ms, c.reported_ms - 0.3 * c.calls, c.calls) for c in _clocks(0.5, seed=4)]
    chk = check(ref, forged, cand_ms=0.7, device="cpu")
    assert not chk.disagrees  # 0.3 ms per call: under the CPU's 1 ms floor for rejecting ...
    assert charge(chk, 0.7) == pytest.approx(0.3 - CHARGE_MARGIN * 0.7, abs=0.02)  # ... but charged all the same
    assert charge(check(ref, _clocks(0.5, seed=5), cand_ms=1.0, device="cpu"), 1.0) == 0.0  # honest: nothing
    charged = summarise_rounds(PairedTimes(ref=[1.0] * n * rounds, cand=[0.7] * n * rounds), n, 5, 0.1,
                               cand_extra_ms=charge(chk, 0.7))
    assert charged.speedup_raw == pytest.approx(1.0, abs=0.03)


def test_an_attempt_whose_reference_waited_for_cores_is_reported_only_when_no_other_passes():
    """Adversarial (2026-12-06, 2-core VM, one busy process beside two torch threads): attempts in which the
    reference's threads waited for a core half the time read anything from 0.03x to 3.95x; a calm attempt of the same
    pair comes first, and a contended one is reported only when nothing else passed (the pair then carries
    ``cpu_contended``). Legitimate twin: the same figures on a GPU lane, where the rule does not apply, and a CPU
    attempt under the limit, change nothing."""
    from dataclasses import replace as dc_replace

    from cudal1.harness.attempts import choose_attempt
    from cudal1.harness.cpu_wait import WAIT_LIMIT, Wait

    def cpu(a, share):
        wait = None if share is None else Wait(share, 200.0 * share)  # an attempt's 200 ms of reference batches
        return dc_replace(a, device="cpu", cpu_wait=wait, check=replace(a.check, device="cpu"))

    busy, calm = cpu(_attempt(0.0, 0.0, 0.05, True), 0.5), cpu(_attempt(0.0, 0.0, 0.2, False), 0.05)
    assert busy.contended and not calm.contended and busy.passes and calm.passes
    assert choose_attempt([busy, calm]) == 1  # a calm unstable attempt before a stable contended one
    assert choose_attempt([busy]) == 0  # nothing else: reported, and flagged by the pair
    on_gpu = dc_replace(busy, device="cuda")
    assert not on_gpu.contended and choose_attempt([on_gpu, calm]) == 0
    under = cpu(_attempt(0.0, 0.0, 0.05, True), WAIT_LIMIT * 0.9)
    assert not under.contended and choose_attempt([under, calm]) == 0
    assert not cpu(_attempt(0.0, 0.0, 0.05, True), None).contended  # not measured: no evidence either way


def test_a_speedup_from_buckets_wider_apart_than_itself_is_erratic():
    """Adversarial (2026-12-06, 2-core VM beside a busy process): the helpers adversary's 3.95x came from buckets whose
    speedups spread 7.3 times their median; such a figure is ``timing_erratic`` (not verified). Legitimate twins: a
    helpers adversary's own swing on a quiet machine (0.75 at 1.5x) and a slow candidate that starts a thread each call
    (0.05x, buckets 3 apart: slow whatever the swing) are not."""
    from dataclasses import replace as dc_replace

    from cudal1.harness.attempts import ERRATIC_SPREAD, erratic

    s = _attempt(0.0, 0.0, 7.3, False).summary
    assert erratic(dc_replace(s, speedup_raw=3.95, ratio_spread=7.3))
    assert not erratic(dc_replace(s, speedup_raw=1.5, ratio_spread=0.75))
    assert not erratic(dc_replace(s, speedup_raw=0.05, ratio_spread=3.0))
    assert not erratic(dc_replace(s, speedup_raw=2.0, ratio_spread=ERRATIC_SPREAD))
