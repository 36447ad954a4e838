"""The parent's own clock against the times a worker reports.

For every timed batch the parent measures, with its monotonic clock, the time from sending ``batch`` to
receiving the batch's digests (the digests need every output, so the outputs were computed inside that
window); on a CPU, to seeing the worker stopped after it wrote every value of its outputs to its outbox (a
committed batch: the parent digests the values itself, off the clock; :mod:`cudal1.harness.pair`). The worker
reports per-call times for the same batch. The *gap* (parent time minus the sum of the reported times) is the
protocol's overhead: drawing the inputs, flushing the L2, synchronising, digesting, the messages. Both workers
run the same protocol on the same inputs and output sizes, so the reference's gap (the clean process) tells what
the candidate's should be; the candidate's *excess* is its gap beyond the reference's, per call (the median over
the rounds of an attempt).

**The candidate's time is the parent's to measure** (issue 40). The excess is charged: the candidate's time
per call in the speedup is what its process reported plus the excess beyond :data:`CHARGE_MARGIN` of that time
(:func:`charge`), that is, up to that margin, the parent's time for its batch less the reference's protocol
overhead. A candidate that reports its calls shorter than they took, or does work outside its timed calls
(deferred past its timer, done while digesting), gains at most the margin from it, however small the task: before
this, an excess within a fixed allowance per call was free, and a candidate reporting its calls short on a tiny CPU
task was paid an absurd speedup (benchmarks/results/2026-12-05-library-docstring-figures.md). A negative excess is
not credited. The price is paid by honest candidates whose process happens to run the protocol slower than the
reference's (a few percent of the protocol's own time, which on a tiny CPU task can be several times the call):
their figure errs toward slower, never faster.

Beyond the charge, :func:`check` fails the pair (``timing_disagrees``) when the excess is larger than the run's
own noise can explain (:data:`REL_ALLOWANCE` of the candidate's time, :data:`SIGMAS` standard errors of the excess
or of the reference's own protocol time, and a floor per device): such a candidate forged its times or worked
outside its calls, and is rejected for it.

A figure whose margin is large against the call cannot be trusted: :func:`resolved` says when the noise part of
the margin stays within :data:`RESOLUTION` of the candidate's time (else the pair carries ``timing_unresolved``).

What this still allows: a candidate process can skip harness steps that are its own (the L2 flush before its
calls, which writes about twice the L2's size) and hide up to that much work.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

REL_ALLOWANCE = 0.05  #: of the candidate's time per call, before a pair is rejected for its excess
#: of the candidate's reported time per call, the excess left uncharged: two processes running the same protocol
#: differ by a few percent of it (the protocol's own work, about 2 ms a batch on a 2-core CPU for a 0.4 ms batch
#: of calls, runs at each process's speed); a candidate can hide at most this much work
CHARGE_MARGIN = 0.02
CHARGE_SIGMAS = 2.0  #: robust standard errors of the median excess left uncharged (at most; see charge_margin)
SIGMAS = 4.0  #: robust standard errors of the median excess
#: per device, as fractions of the candidate's time per call as the parent's clock saw it (reported plus excess): the
#: most of the excess left uncharged as noise (:func:`charge_margin`), and the most noise for the figure to count as
#: resolved (:func:`resolved`); a device not named has no bound. CUDA: on an H200 the noise part of the margin was at
#: most 0.25 of the call for 75 of the 82 built-in self-pairs and above 0.5 for 3 (median 0.025; the protocol of a
#: 2 GB task, inputs and digests, takes 4-6 ms a call against 1-2 ms of work), and 0.09-0.38 on launch-bound
#: KernelBench tasks (2026-11-29 stores; benchmarks/results/2026-12-04-harness-timing-h200.md). CPU: 0.1. With 0.25 a
#: candidate reporting its 0.035 ms calls as 0.001 ms read 1.66x, verified (same code as the reference, resolved,
#: unstable; CI's 2-core runner, 2026-12-06): a forged constant time does not share the reference's noise, so the cap
#: is what it gains, times that noise. Honest CPU pairs of the 2-core VM had excesses of -0.014 to +0.003 ms quiet on
#: 0.03-0.24 ms calls, once +0.064 ms on a 0.19 ms self-pair (0.88x; 0.83x by its figures with 0.1)
#: (benchmarks/results/2026-12-06-clock-margin-cap-cpu.md)
MARGIN_CAP = {"cpu": 0.1, "cuda": 0.25}
RESOLUTION = {"cpu": 0.5, "cuda": 0.5}
FLOOR_MS = {"cuda": 0.02, "cpu": 1.0}  #: per call, for rejecting only (the excess is charged whatever its size):
#: message and scheduling jitter the test cannot resolve (CPU: the sandboxed process's own overhead on a loaded
#: 2-core machine reached 0.35 ms per call for honest candidates)


@dataclass(frozen=True)
class BatchClock:
    """One timed batch of one worker: the parent's time for it and the worker's reported times (ms)."""

    parent_ms: float
    reported_ms: float
    calls: int

    @property
    def gap_ms(self) -> float:
        return self.parent_ms - self.reported_ms


@dataclass(frozen=True)
class ClockCheck:
    """Per call: the candidate's median gap beyond the reference's, and the allowance it was held to (ms)."""

    excess_ms: float
    allowance_ms: float
    ref_gap_ms: float
    cand_gap_ms: float
    rounds: int
    se_ms: float = 0.0  #: robust standard error of the median excess (1.4826 MAD / sqrt(rounds))
    ref_se_ms: float = 0.0  #: the same of the reference's own protocol time per call, times sqrt(2) (see charge_margin)
    device: str = "cuda"  #: the lane's device ("cpu" or "cuda"): the margin's bounds are per device

    @property
    def disagrees(self) -> bool:
        return self.excess_ms > self.allowance_ms

    def to_dict(self) -> dict:
        return {"excess_ms_per_call": self.excess_ms, "allowance_ms_per_call": self.allowance_ms,
                "ref_gap_ms_per_call": self.ref_gap_ms, "cand_gap_ms_per_call": self.cand_gap_ms,
                "rounds": self.rounds, "se_ms_per_call": self.se_ms, "ref_se_ms_per_call": self.ref_se_ms,
                "device": self.device,
                "disagrees": self.disagrees}


def check(ref: list[BatchClock], cand: list[BatchClock], cand_ms: float, device: str) -> ClockCheck:
    """Compare paired batches (same round, same inputs) of the reference and the candidate."""
    if not ref or len(ref) != len(cand):
        raise ValueError("need the same number (> 0) of reference and candidate batches")
    excess = [(c.gap_ms - r.gap_ms) / max(c.calls, 1) for r, c in zip(ref, cand, strict=True)]
    med = statistics.median(excess)
    mad = statistics.median(abs(e - med) for e in excess)
    se = 1.4826 * mad / max(len(excess), 1) ** 0.5
    ref_gaps = [r.gap_ms / max(r.calls, 1) for r in ref]
    ref_med = statistics.median(ref_gaps)
    ref_se = 2**0.5 * 1.4826 * statistics.median(abs(g - ref_med) for g in ref_gaps) / max(len(ref_gaps), 1) ** 0.5
    # the reference's own spread counts too: the protocol of a 2 GB task ran at two or three speeds per process on an
    # H200, for several rounds at a time, so paired differences alone understate the noise
    # (benchmarks/results/2026-12-04-harness-timing-h200.md)
    allowance = max(REL_ALLOWANCE * cand_ms, SIGMAS * se, SIGMAS * ref_se, FLOOR_MS.get(device, FLOOR_MS["cpu"]))
    return ClockCheck(med, allowance, ref_med, statistics.median(c.gap_ms / max(c.calls, 1) for c in cand),
                      len(excess), se, ref_se, device.split(":")[0])


def charge_margin(check: ClockCheck, reported_ms: float) -> float:
    """The excess per call (ms) left uncharged: :data:`CHARGE_MARGIN` of the candidate's reported time, or ``z``
    robust standard errors of the median excess when that is more: the larger of two estimates of that error, one
    from the excesses themselves (``z`` at most :data:`CHARGE_SIGMAS` and below ``sqrt(rounds) / 1.4826``: see
    :func:`charge` on why), one from the reference's own protocol times (``z`` = :data:`CHARGE_SIGMAS`; the candidate
    has no say in them). With a handful of rounds (a CPU task whose inputs and digests take 50 times its calls
    gets five) one estimate alone came out small by chance and charged an honest candidate heavily.
    The noise part is at most :data:`MARGIN_CAP` of the candidate's time as the clock saw it: beyond that cap, noise
    is charged to the candidate (its figure errs toward slower) rather than left as room to hide work in."""
    stat = statistical_margin(check)
    cap = MARGIN_CAP.get(check.device)
    if cap is not None:
        stat = min(stat, cap * _seen_ms(check, reported_ms))
    return max(CHARGE_MARGIN * max(reported_ms, 0.0), stat)


def _seen_ms(check: ClockCheck, reported_ms: float) -> float:
    """The candidate's time per call as the parent's clock saw it: reported plus the (non-negative) excess."""
    return max(reported_ms, 0.0) + max(check.excess_ms, 0.0)


def statistical_margin(check: ClockCheck) -> float:
    """The noise part of :func:`charge_margin` (ms per call): what the two processes' protocol times and the machine
    could have put into the excess without the candidate doing anything."""
    z = min(CHARGE_SIGMAS, 0.9 * max(check.rounds, 1) ** 0.5 / 1.4826)
    return max(z * check.se_ms, CHARGE_SIGMAS * check.ref_se_ms)


def resolved(check: ClockCheck, reported_ms: float) -> bool:
    """Whether the parent's clock resolved the candidate's time: the noise of the excess (:func:`statistical_margin`)
    is at most :data:`RESOLUTION` of the candidate's time per call as the clock saw it (reported plus excess).

    The charge leaves at most :data:`MARGIN_CAP` of that time uncharged, but the excess itself is no surer than its
    noise: under outside load on two cores the noise of a microsecond-scale CPU call exceeds the call, and a
    candidate that reported its calls as near zero read several times faster with no other finding
    (benchmarks/results/2026-12-04-committed-batches-cpu.md). Such a figure carries ``timing_unresolved`` and is not
    trusted as an improvement."""
    limit = RESOLUTION.get(check.device)
    if limit is None:
        return True
    return statistical_margin(check) <= limit * _seen_ms(check, reported_ms)


def charge(check: ClockCheck, reported_ms: float) -> float:
    """The time per call (ms) added to the candidate's reported times (``reported_ms`` a call): its median excess over
    the reference's protocol overhead, as the parent's clock saw it, beyond :func:`charge_margin`; never negative.

    The statistical part of the margin keeps noise from being charged to honest candidates (the excess of an honest
    pair is the difference of two processes' protocol times, a few percent of them, either sign). It cannot be
    turned into room to hide work: a candidate can only lengthen its own protocol time (it must draw the same
    inputs and return the same digests), and delays it adds move the median excess up by at least as much as they
    widen the margin, since the median absolute deviation of a non-negative delay is at most its median and ``z``
    is kept under ``sqrt(rounds) / 1.4826``. What it can hide is the harness work of its own process that it skips
    or does faster (see the module docstring)."""
    return max(check.excess_ms - charge_margin(check, reported_ms), 0.0)
