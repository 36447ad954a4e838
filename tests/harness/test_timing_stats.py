"""The timing protocol's statistics: rounding toward 1, buckets, spread, bootstrap, round counts."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from cudal1.harness.flags import improves
from cudal1.harness.timer import Timer
from cudal1.harness.timing import (
    PROCESS_DRAW_SD,
    PairedTimes,
    bootstrap_ci,
    bucket_means,
    choose_rounds,
    round_toward_one,
    spread,
    summarise,
    summarise_rounds,
)


@pytest.mark.parametrize(
    "x, want",
    [(1.118, 1.11), (0.992, 1.0), (0.5, 0.5), (1.0, 1.0), (2.0, 2.0), (1.999, 1.99), (0.011, 0.02), (1.11, 1.11)],
)
def test_round_toward_one_examples(x, want):
    assert round_toward_one(x) == want


@given(st.floats(min_value=1e-3, max_value=1e3, allow_nan=False))
def test_round_toward_one_never_moves_away_from_one(x):
    r = round_toward_one(x)
    assert abs(r - 1.0) <= abs(x - 1.0) + 1e-12
    assert abs(r - x) <= 0.01 + 1e-12


def test_bucket_means_and_spread():
    vals = [1.0] * 5 + [2.0] * 5
    assert bucket_means(vals, 2) == [1.0, 2.0]
    assert spread([1.0, 2.0, 1.5]) == pytest.approx(1.0 / 1.5)
    assert spread([3.0, 3.0]) == 0.0
    with pytest.raises(ValueError):
        bucket_means([1.0], 2)


def test_summarise_detects_a_drifting_measurement():
    steady = PairedTimes(ref=[2.0] * 50, cand=[1.0] * 50)
    s = summarise(steady, buckets=5, spread_limit=0.1)
    assert s.stable and s.speedup == 2.0 and s.ci == (2.0, 2.0)
    drift = PairedTimes(ref=[2.0] * 40 + [4.0] * 10, cand=[1.0] * 50)
    d = summarise(drift, buckets=5, spread_limit=0.1)
    assert not d.stable
    assert d.speedup == 2.0  # the median of bucket ratios resists the one bad bucket


def test_bootstrap_ci_brackets_the_ratio():
    rng = random.Random(1)
    ref = [2.0 + rng.gauss(0, 0.05) for _ in range(100)]
    cand = [1.0 + rng.gauss(0, 0.05) for _ in range(100)]
    lo, hi = bootstrap_ci(ref, cand)
    assert lo < sum(ref) / sum(cand) < hi
    assert hi - lo < 0.2


def test_choose_rounds_is_a_clamped_multiple_of_buckets():
    assert choose_rounds(10.0, 1.0, 10, 200, 5) == 100
    assert choose_rounds(1000.0, 1.0, 10, 200, 5) == 10
    assert choose_rounds(0.001, 1.0, 10, 200, 5) == 200
    assert choose_rounds(10.0, 0.33, 10, 200, 7) % 7 == 0


def test_timer_uses_clock_captured_before_candidate_code():
    import time as time_mod

    timer = Timer(torch.device("cpu"))
    real = time_mod.perf_counter_ns
    try:
        time_mod.perf_counter_ns = lambda: 0  # a candidate patching the clock
        ms, _ = timer.time_call(lambda: sum(range(20000)), [])
    finally:
        time_mod.perf_counter_ns = real
    assert ms > 0


def _rounds_at(rng: random.Random, ratio: float, jitter: float, n: int, rounds: int = 40) -> PairedTimes:
    """``rounds`` paired rounds of ``n`` calls, the reference ``ratio`` times the candidate's 0.5 ms, each call
    up to ``jitter`` (relative) slower at random."""
    ref = [0.5 * ratio * (1 + jitter * rng.random()) for _ in range(n * rounds)]
    return PairedTimes(ref=ref, cand=[0.5 * (1 + jitter * rng.random()) for _ in range(n * rounds)])


def test_a_cpu_interval_covers_the_speed_of_the_processes_not_only_their_rounds():
    """Two worker processes on a CPU each settle at their own speed, which one pair's rounds cannot see: an honest
    copy read 1.2x with a tight bootstrap interval. With the device's process spread (PROCESS_DRAW_SD) added, such a
    reading is no improvement (the interval reaches 1); its twin, a rewrite twice as fast, still is."""
    n, rng = 8, random.Random(3)
    copy_on_two_speeds, faster = _rounds_at(rng, 1.2, 0.01, n), _rounds_at(rng, 2.0, 0.01, n)
    tight = summarise_rounds(copy_on_two_speeds, n, 5, 0.1)
    assert tight.ci[0] > 1.15 and improves("ok", [], tight.ci)  # what a pair paid before: an "improvement"
    cpu = summarise_rounds(copy_on_two_speeds, n, 5, 0.1, process_sd=PROCESS_DRAW_SD["cpu"])
    assert cpu.speedup == tight.speedup and cpu.ci[0] <= 1.0 < cpu.ci[1] and not improves("ok", [], cpu.ci)
    twin = summarise_rounds(faster, n, 5, 0.1, process_sd=PROCESS_DRAW_SD["cpu"])
    assert improves("ok", [], twin.ci) and twin.ci[0] > 1.5


def test_a_gpu_interval_covers_the_speed_of_the_processes_too():
    """On a GPU as well each process keeps a speed of its own (KernelBench's 250 references against themselves on
    an H100: 63 bootstrap intervals wholly above 1). A copy that reads 1.04x with a tight interval is no improvement
    once the CUDA spread is added; a rewrite 1.2x as fast still is, and the point speedup is the same either way."""
    n, rng = 8, random.Random(5)
    copy_on_two_speeds, faster = _rounds_at(rng, 1.04, 0.002, n), _rounds_at(rng, 1.2, 0.002, n)
    tight = summarise_rounds(copy_on_two_speeds, n, 5, 0.1)
    assert tight.ci[0] > 1.03 and improves("ok", [], tight.ci)  # the bootstrap interval alone: an "improvement"
    gpu = summarise_rounds(copy_on_two_speeds, n, 5, 0.1, process_sd=PROCESS_DRAW_SD["cuda"])
    assert gpu.speedup == tight.speedup and gpu.ci[0] <= 1.0 < gpu.ci[1] and not improves("ok", [], gpu.ci)
    twin = summarise_rounds(faster, n, 5, 0.1, process_sd=PROCESS_DRAW_SD["cuda"])
    assert improves("ok", [], twin.ci) and twin.ci[0] > 1.1
