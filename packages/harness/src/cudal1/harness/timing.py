"""The timing protocol (after CUDA-L1), for CUDA and CPU.

Per attempt:
  1. ``warmup`` untimed calls of each model (builds, autotuning, compilation happen here).
  2. ``rounds`` paired rounds; in each, the reference and the candidate are each timed once, in random
     order, on the same input set (sets rotate across rounds). Before every timed call the L2 cache is
     flushed (CUDA) and the whole device is synchronised; after the call the whole device is
     synchronised again, and the host clock between the two synchronisations is the call's time. Work a
     candidate hides on side streams or threads is therefore inside its time.
  3. Rounds are grouped into ``buckets`` consecutive buckets. If the bucket means of either model spread
     by more than ``spread_limit`` ((max - min) / median), the attempt is rejected and re-measured.

Reported: per model the median of bucket means (ms); the speedup is the median of per-bucket ratios
(reference / candidate), with a 95% bootstrap confidence interval over paired rounds, and rounded toward
1 at two decimals (:func:`round_toward_one`). On CPU the same loop runs with wall clocks.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


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
    """Raw per-call times (ms) of paired rounds: ``ref[i]`` and ``cand[i]`` come from round i."""

    ref: list[float] = field(default_factory=list)
    cand: list[float] = field(default_factory=list)


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
        }


def bucket_means(values: Sequence[float], buckets: int) -> list[float]:
    """Means of ``buckets`` consecutive, nearly equal groups of ``values``."""
    n = len(values)
    if n < buckets:
        raise ValueError(f"need at least {buckets} values for {buckets} buckets, got {n}")
    edges = [round(i * n / buckets) for i in range(buckets + 1)]
    return [statistics.fmean(values[edges[i] : edges[i + 1]]) for i in range(buckets)]


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


def summarise(times: PairedTimes, buckets: int, spread_limit: float, seed: int = 0) -> TimingSummary:
    """Turn paired raw times into the reported figures (see module docstring)."""
    rb = bucket_means(times.ref, buckets)
    cb = bucket_means(times.cand, buckets)
    ratios = [r / c if c > 0 else math.inf for r, c in zip(rb, cb, strict=True)]
    s_raw = statistics.median(ratios)
    rs, cs = spread(rb), spread(cb)
    return TimingSummary(
        ref_ms=statistics.median(rb),
        cand_ms=statistics.median(cb),
        speedup_raw=s_raw,
        speedup=round_toward_one(s_raw),
        ci=bootstrap_ci(times.ref, times.cand, seed=seed),
        ref_bucket_ms=rb,
        cand_bucket_ms=cb,
        ref_spread=rs,
        cand_spread=cs,
        rounds=len(times.ref),
        stable=rs <= spread_limit and cs <= spread_limit,
    )


class Timer:
    """Times one call between two whole-device synchronisations, with the host's monotonic clock.

    The clock and synchronise functions are captured when the Timer is made (before any candidate code
    is imported), so a candidate that later patches ``time`` or ``torch.cuda.synchronize`` does not
    change what is measured.
    """

    def __init__(self, device: torch.device, l2_flush_bytes: int = 0) -> None:
        self.device = device
        self._clock = time.perf_counter_ns
        self._sync: Callable[[], None]
        if device.type == "cuda":
            sync = torch.cuda.synchronize
            dev = device
            self._sync = lambda: sync(dev)
            n = max(l2_flush_bytes // 4, 1)
            self._flush_buf = torch.empty(n, dtype=torch.float32, device=device) if l2_flush_bytes else None
        else:
            self._sync = lambda: None
            self._flush_buf = None

    def flush_l2(self) -> None:
        """Overwrite a buffer larger than L2 so no call starts with its data cached (CUDA only)."""
        if self._flush_buf is not None:
            self._flush_buf.zero_()

    def time_call(self, fn: Callable[..., Any], args: Sequence[Any]) -> tuple[float, Any]:
        """Run ``fn(*args)`` once; return (milliseconds, output)."""
        self.flush_l2()
        self._sync()
        t0 = self._clock()
        out = fn(*args)
        self._sync()
        t1 = self._clock()
        return (t1 - t0) / 1e6, out


def choose_rounds(per_round_ms: float, budget_s: float, min_rounds: int, max_rounds: int, buckets: int) -> int:
    """Rounds that fill the time budget, clamped, rounded up to a multiple of ``buckets``."""
    want = int(budget_s * 1000.0 / max(per_round_ms, 1e-6))
    n = max(min_rounds, min(max_rounds, want))
    return int(math.ceil(n / buckets) * buckets)


def measure_pairs(
    timer: Timer,
    ref_fn: Callable[..., Any],
    cand_fn: Callable[..., Any],
    inputs_for_round: Callable[[int], Sequence[Any]],
    rounds: int,
    rng: random.Random,
    on_round: Callable[[int, dict[str, Any]], None] | None = None,
) -> PairedTimes:
    """Run ``rounds`` paired rounds; in each, both models are timed on ``inputs_for_round(r)`` in random
    order. ``on_round(r, {"ref": output, "cand": output})`` sees both outputs of the round's timed calls
    (so they can be checked) before they are dropped. Nothing but the calls is inside the timed region.
    """
    times = PairedTimes()
    for r in range(rounds):
        args = inputs_for_round(r)
        order = ("ref", "cand") if rng.random() < 0.5 else ("cand", "ref")
        got: dict[str, float] = {}
        outs: dict[str, Any] = {}
        for which in order:
            ms, outs[which] = timer.time_call(ref_fn if which == "ref" else cand_fn, args)
            got[which] = ms
        if on_round is not None:
            on_round(r, outs)
        del outs
        times.ref.append(got["ref"])
        times.cand.append(got["cand"])
    return times
