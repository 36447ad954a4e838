"""The parent's own clock against the times a worker reports.

For every timed batch the parent measures, with its monotonic clock, the time from sending ``batch`` to
receiving the batch's digests (the digests need every output, so the outputs were computed inside that
window). The worker reports per-call times for the same batch. The *gap* (parent time minus the sum of the
reported times) is the protocol's overhead: drawing the inputs, flushing the L2, synchronising, digesting,
the messages. Both workers run the same protocol on the same inputs and output sizes, so the reference's gap
(the clean process) tells what the candidate's should be. A candidate that does work outside its reported
times (work deferred past its timer, outputs computed while digesting, times forged in its own process) has
a larger gap; :func:`check` compares the two per call and fails the pair (``timing_disagrees``) when the
candidate's excess is beyond the run's own noise.

What this bounds: the candidate's reported time per call is at least what the parent saw minus the
reference's overhead and the noise allowance. A candidate process could skip harness steps that are its own
(the L2 flush before its calls, about 2 x L2 bytes written: some 30-40 us per call on an H100) and hide that
much work; the allowance below is larger than that on a GPU only for calls under about 0.5 ms.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

REL_ALLOWANCE = 0.05  #: of the candidate's time per call
SIGMAS = 4.0  #: robust standard errors of the median excess
FLOOR_MS = {"cuda": 0.02, "cpu": 1.0}  #: per call: message and scheduling jitter the test cannot resolve (CPU: the
#: sandboxed process's own overhead on a loaded 2-core machine reached 0.35 ms per call for honest candidates)


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

    @property
    def disagrees(self) -> bool:
        return self.excess_ms > self.allowance_ms

    def to_dict(self) -> dict:
        return {"excess_ms_per_call": self.excess_ms, "allowance_ms_per_call": self.allowance_ms,
                "ref_gap_ms_per_call": self.ref_gap_ms, "cand_gap_ms_per_call": self.cand_gap_ms,
                "rounds": self.rounds, "disagrees": self.disagrees}


def check(ref: list[BatchClock], cand: list[BatchClock], cand_ms: float, device: str) -> ClockCheck:
    """Compare paired batches (same round, same inputs) of the reference and the candidate."""
    if not ref or len(ref) != len(cand):
        raise ValueError("need the same number (> 0) of reference and candidate batches")
    excess = [(c.gap_ms - r.gap_ms) / max(c.calls, 1) for r, c in zip(ref, cand, strict=True)]
    med = statistics.median(excess)
    mad = statistics.median(abs(e - med) for e in excess)
    se = 1.4826 * mad / max(len(excess), 1) ** 0.5
    allowance = max(REL_ALLOWANCE * cand_ms, SIGMAS * se, FLOOR_MS.get(device, FLOOR_MS["cpu"]))
    return ClockCheck(med, allowance, statistics.median(r.gap_ms / max(r.calls, 1) for r in ref),
                      statistics.median(c.gap_ms / max(c.calls, 1) for c in cand), len(excess))
