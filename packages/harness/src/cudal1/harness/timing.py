"""Parent side: the statistics of paired timing rounds.

The parent times both models in turn (:mod:`cudal1.harness.pair`): in each paired round the clean reference worker
and the candidate's worker each run one batch of calls on the same input sets, in random order, the other worker
stopped meanwhile; each worker times its calls with its own :class:`~cudal1.harness.timer.Timer`, and the parent's
own clock around each batch checks what it reports (:mod:`cudal1.harness.clockcheck`). Here: a round's time is the
mean of its batch's calls (:func:`summarise_rounds`: work moved between the calls of a batch cannot skew it); rounds
are grouped into ``buckets`` consecutive buckets, and if the bucket means of either model spread by more than
``spread_limit`` ((max - min) / median) the attempt is unstable and measured again. Reported: per model the median
of bucket means (ms); the speedup is the median of per-bucket ratios (reference / candidate), with a 95% bootstrap
confidence interval, rounded toward 1 at two decimals (:func:`round_toward_one`); :func:`choose_rounds` sizes an
attempt to its time budget. On a device where worker processes run the same code at different speeds for their
whole life, the interval also covers that (:data:`PROCESS_DRAW_SD`).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: per device, the standard deviation (natural log) of the speed ratio of two worker processes running the same code:
#: each process settles at its own speed for its whole life, which the rounds of one pair cannot see (they all run in
#: the same two processes), so it is added to the bootstrap interval (in quadrature, in log space). On the 2-core CPU
#: VM, honest self-pairs of the default recipe's sub-millisecond tasks read 0.72-1.27x with tight intervals, 5 of 18
#: with the interval above 1 (an identical rewrite paid as an improvement); the log-ratio's spread reached 0.15-0.22
#: on the layer-norm tasks (benchmarks/results/2026-12-05-cpu-process-draws.md). CUDA: 0.025. KernelBench's 250
#: references against themselves on an H100 (three lanes) read within [0.95, 1.05] in 241 cases, but with the bootstrap
#: interval alone 63 of the 250 intervals lay wholly above 1 (an identical rewrite paid as an improvement) and 42 below;
#: 9_ResNet18's reference ran 1.60-2.95 ms a call in different processes of five runs. With 0.025: 5 above, 2 below;
#: the built-in suite's 80 self-pairs on an H200 (one lane): 10 above and 15 below without, none either way with it
#: (benchmarks/results/2026-12-06-gpu-process-draws-cpu.md, made from those runs' stores). A device not named adds
#: nothing.
PROCESS_DRAW_SD = {"cpu": 0.12, "cuda": 0.025}


def widen_for_processes(speedup: float, lo: float, hi: float, process_sd: float) -> tuple[float, float]:
    """The interval ``(lo, hi)`` around ``speedup`` widened by the spread of two processes' speeds: ``1.96 *
    process_sd`` (natural log) added to each side in quadrature, in log space (:data:`PROCESS_DRAW_SD`). Unchanged
    when ``process_sd`` is 0 or a figure is not positive."""
    if process_sd <= 0 or speedup <= 0 or lo <= 0:
        return lo, hi
    centre, extra = math.log(speedup), (1.96 * process_sd) ** 2
    return (math.exp(centre - math.sqrt(max(centre - math.log(lo), 0.0) ** 2 + extra)),
            math.exp(centre + math.sqrt(max(math.log(hi) - centre, 0.0) ** 2 + extra)))


def round_toward_one(x: float, decimals: int = 2) -> float:
    """Round a speedup conservatively toward 1: 1.118 -> 1.11, 0.992 -> 1.0, 0.5 -> 0.5."""
    if not math.isfinite(x):
        return x
    f = 10**decimals
    # tiny epsilon so that exactly representable decimals are not pushed one step by binary error
    if x >= 1.0:
        return math.floor(x * f + 1e-9) / f
    return math.ceil(x * f - 1e-9) / f


@dataclass
class PairedTimes:
    """Raw per-call times (ms) of paired rounds: ``ref[i]`` and ``cand[i]`` come from round i. ``placement``: on
    CUDA, each round's input and output offsets in both workers (diagnostics, kept in debug records only)."""

    ref: list[float] = field(default_factory=list)
    cand: list[float] = field(default_factory=list)
    placement: list[dict[str, Any]] = field(default_factory=list)
    #: per round, debug runs only: each worker's own step times of its batch and digest (WorkerReport.steps_ms)
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: CPU, per round: how long the reference's threads waited for a core during its batch (ms, summed over its
    #: threads) and how long the batch took on the parent's clock (ms); :mod:`cudal1.harness.cpu_wait`
    ref_wait_ms: list[float] = field(default_factory=list)
    ref_batch_ms: list[float] = field(default_factory=list)


@dataclass
class TimingSummary:
    """Statistics of one accepted (or last) attempt."""

    ref_ms: float
    cand_ms: float
    speedup_raw: float
    speedup: float
    ci: tuple[float, float]
    ref_bucket_ms: list[float]
    cand_bucket_ms: list[float]
    ref_spread: float
    cand_spread: float
    rounds: int
    stable: bool
    ratio_spread: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref_ms": self.ref_ms,
            "cand_ms": self.cand_ms,
            "speedup_raw": self.speedup_raw,
            "ci": list(self.ci),
            "ref_bucket_ms": self.ref_bucket_ms,
            "cand_bucket_ms": self.cand_bucket_ms,
            "ref_spread": self.ref_spread,
            "cand_spread": self.cand_spread,
            "rounds": self.rounds,
            "stable": self.stable,
            "ratio_spread": self.ratio_spread,
        }


def bucket_means(values: Sequence[float], buckets: int) -> list[float]:
    """Means of ``buckets`` consecutive, nearly equal groups of ``values``."""
    n = len(values)
    if n < buckets:
        raise ValueError(f"need at least {buckets} values for {buckets} buckets, got {n}")
    edges = [round(i * n / buckets) for i in range(buckets + 1)]
    return [statistics.fmean(values[edges[i] : edges[i + 1]]) for i in range(buckets)]


def bucket_medians(values: Sequence[float], buckets: int) -> list[float]:
    """Medians of ``buckets`` consecutive, nearly equal groups of ``values`` (robust to the long right tail of
    per-call times: a launch stalled by the operating system, a clock change)."""
    n = len(values)
    if n < buckets:
        raise ValueError(f"need at least {buckets} values for {buckets} buckets, got {n}")
    edges = [round(i * n / buckets) for i in range(buckets + 1)]
    return [statistics.median(values[edges[i] : edges[i + 1]]) for i in range(buckets)]


def bootstrap_median_ci(ref: Sequence[float], cand: Sequence[float], *, resamples: int = 400, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of median(ref)/median(cand), resampling paired calls (numpy)."""
    import numpy as np

    r, c = np.asarray(ref, dtype=np.float64), np.asarray(cand, dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(r), size=(resamples, len(r)))
    ratios = np.median(r[idx], axis=1) / np.maximum(np.median(c[idx], axis=1), 1e-300)
    lo, hi = np.quantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def spread(means: Sequence[float]) -> float:
    """(max - min) / median of bucket means: 0 for perfectly stable timings."""
    med = statistics.median(means)
    return (max(means) - min(means)) / med if med > 0 else math.inf


def bootstrap_ci(
    ref: Sequence[float], cand: Sequence[float], *, resamples: int = 400, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(ref)/mean(cand), resampling paired rounds."""
    rng = random.Random(seed)
    n = len(ref)
    ratios = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        r = sum(ref[i] for i in idx)
        c = sum(cand[i] for i in idx)
        ratios.append(r / c if c > 0 else math.inf)
    ratios.sort()
    lo = ratios[int((1 - level) / 2 * (resamples - 1))]
    hi = ratios[int((1 + level) / 2 * (resamples - 1))]
    return (lo, hi)


def summarise(times: PairedTimes, buckets: int, spread_limit: float, seed: int = 0, *,
              robust: bool = False) -> TimingSummary:
    """Turn paired raw times into the reported figures (see module docstring). ``robust``: bucket medians and a
    bootstrap of the ratio of medians instead of means (the harness's timing of many calls per bucket)."""
    rb = bucket_medians(times.ref, buckets) if robust else bucket_means(times.ref, buckets)
    cb = bucket_medians(times.cand, buckets) if robust else bucket_means(times.cand, buckets)
    ratios = [r / c if c > 0 else math.inf for r, c in zip(rb, cb, strict=True)]
    s_raw = statistics.median(ratios)
    rs, cs = spread(rb), spread(cb)
    return TimingSummary(
        ref_ms=statistics.median(rb),
        cand_ms=statistics.median(cb),
        speedup_raw=s_raw,
        speedup=round_toward_one(s_raw),
        ci=(bootstrap_median_ci if robust else bootstrap_ci)(times.ref, times.cand, seed=seed),
        ref_bucket_ms=rb,
        cand_bucket_ms=cb,
        ref_spread=rs,
        cand_spread=cs,
        rounds=len(times.ref),
        stable=rs <= spread_limit and cs <= spread_limit,
    )


def summarise_rounds(times: PairedTimes, calls_per_round: int, buckets: int, spread_limit: float,
                     seed: int = 0, *, cand_extra_ms: float = 0.0, process_sd: float = 0.0) -> TimingSummary:
    """The reported figures from paired rounds of ``calls_per_round`` calls per model (the harness's protocol).

    **A round's time is the mean of its calls** (the batch's total over its calls), never a per-call statistic: a
    timed call's figure must cover all the work its own output needs, and a candidate can move work between the
    calls of a batch (return unfilled buffers from the first calls and fill them all in the last one, before the
    batch's outputs are digested). Per-call medians paid that as a 50-450x speedup (issue 40); a batch's total is
    the same however its work is spread over its calls, and the parent's clock bounds the total
    (:mod:`cudal1.harness.clockcheck`).

    Each round's reference and candidate batches ran back to back on the same inputs, so a slow period of the
    machine (a CPU that launches kernels late for a few seconds, a clock change) hits both: the speedup is the
    median over rounds of (reference's mean call / candidate's mean call) of the round, with a bootstrap CI over
    rounds. Rounds are grouped into ``buckets``; ``stable`` when the buckets' median ratios spread by at most
    ``spread_limit``. ``ref_ms``/``cand_ms``: medians of the rounds' mean calls; the per-model spreads of bucket
    medians are reported too (how much the machine itself drifted).

    ``cand_extra_ms``: time per call added to every candidate round, what the parent's clock saw beyond the times
    the candidate's process reported (:func:`cudal1.harness.clockcheck.charge`). ``process_sd``: the spread (natural
    log) of two processes' speed ratio on this device (:data:`PROCESS_DRAW_SD`), added to each side of the bootstrap
    interval in quadrature around the speedup, at 1.96 of it: an interval that covers where a pair of other
    processes would have put the ratio, not only these two processes' rounds."""
    import numpy as np

    n = max(int(calls_per_round), 1)
    rounds = len(times.ref) // n
    if rounds < buckets:
        raise ValueError(f"need at least {buckets} rounds of {n} calls, got {len(times.ref)} calls")
    r = np.mean(np.asarray(times.ref[: rounds * n], dtype=np.float64).reshape(rounds, n), axis=1)
    c = np.mean(np.asarray(times.cand[: rounds * n], dtype=np.float64).reshape(rounds, n), axis=1)
    c = c + max(float(cand_extra_ms), 0.0)
    ratio = r / np.maximum(c, 1e-300)
    groups = np.array_split(np.arange(rounds), buckets)
    rb = [float(np.median(r[g])) for g in groups]
    cb = [float(np.median(c[g])) for g in groups]
    qb = [float(np.median(ratio[g])) for g in groups]
    s_raw = float(np.median(ratio))
    rng = np.random.default_rng(seed)
    boots = np.median(ratio[rng.integers(0, rounds, size=(400, rounds))], axis=1)
    lo, hi = np.quantile(boots, [0.025, 0.975])
    lo, hi = widen_for_processes(s_raw, float(lo), float(hi), process_sd)
    ratio_spread = spread(qb)
    return TimingSummary(
        ref_ms=float(np.median(r)), cand_ms=float(np.median(c)), speedup_raw=s_raw, speedup=round_toward_one(s_raw),
        ci=(float(lo), float(hi)), ref_bucket_ms=rb, cand_bucket_ms=cb, ref_spread=spread(rb), cand_spread=spread(cb),
        rounds=rounds * n, stable=ratio_spread <= spread_limit, ratio_spread=ratio_spread)


def choose_rounds(per_round_ms: float, budget_s: float, min_rounds: int, max_rounds: int, buckets: int) -> int:
    """Rounds that fill the time budget, clamped, rounded up to a multiple of ``buckets``."""
    want = int(budget_s * 1000.0 / max(per_round_ms, 1e-6))
    n = max(min_rounds, min(max_rounds, want))
    return int(math.ceil(n / buckets) * buckets)
