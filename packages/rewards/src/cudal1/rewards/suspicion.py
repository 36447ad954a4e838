"""Suspicion: a speedup too good to trust is measured again before it earns a reward.

A speedup above ``threshold`` (default 3x), or above ``best_factor`` (2) times the task's best so far,
is suspicious. It is re-measured through a callable the caller supplies (point it at a second GPU's
pool when there is one); a re-measurement that is not ``ok`` or disagrees by more than ``tolerance``
(10%) rejects the result.

Example:
    >>> from cudal1.harness.types import EvalResult
    >>> from cudal1.rewards.suspicion import Suspicion
    >>> policy = Suspicion()
    >>> policy.is_suspicious(3.5, best_so_far=None), policy.is_suspicious(1.9, best_so_far=0.9)
    (True, True)
    >>> first = EvalResult(task="t", status="ok", speedup=4.0)
    >>> policy.confirm(first, EvalResult(task="t", status="ok", speedup=3.9))
    (True, 'speedups agree: 4.00x then 3.90x (2.5% apart, tolerance 10%)')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from cudal1.harness.types import EvalResult

__all__ = ["Suspicion", "confirm", "is_suspicious"]


def is_suspicious(speedup: float | None, best_so_far: float | None = None, threshold: float = 3.0,
                  best_factor: float = 2.0) -> bool:
    """True when ``speedup`` (x) exceeds ``threshold`` or ``best_factor`` times ``best_so_far``.

    Example:
        >>> is_suspicious(2.0), is_suspicious(2.0, best_so_far=0.8), is_suspicious(None)
        (False, True, False)
    """
    if speedup is None:
        return False
    if math.isnan(speedup) or speedup > threshold:
        return True
    return best_so_far is not None and best_so_far > 0 and speedup > best_factor * best_so_far


def confirm(first: EvalResult, remeasure: EvalResult, tolerance: float = 0.10) -> tuple[bool, str]:
    """Whether ``remeasure`` confirms ``first``'s speedup; returns ``(ok, reason)``.

    Disagreement is ``|s2 - s1| / s1``; beyond ``tolerance`` rejects, as does a re-measurement whose
    status is not ``ok`` (e.g. it failed the correctness check the second time).

    Example:
        >>> a = EvalResult(task="t", status="ok", speedup=5.0)
        >>> confirm(a, EvalResult(task="t", status="ok", speedup=2.0))[0]
        False
    """
    if not first.ok or first.speedup is None:
        return False, f"the first result is not an ok result with a speedup (status {first.status})"
    if not remeasure.ok or remeasure.speedup is None:
        why = f": {remeasure.reason}" if remeasure.reason else ""
        return False, f"re-measurement ended {remeasure.status}{why}"
    s1, s2 = first.speedup, remeasure.speedup
    gap = abs(s2 - s1) / s1
    if not gap <= tolerance:
        return False, (f"re-measurement disagrees: {s1:.2f}x then {s2:.2f}x ({gap:.1%} apart, "
                       f"tolerance {tolerance:.0%})")
    return True, f"speedups agree: {s1:.2f}x then {s2:.2f}x ({gap:.1%} apart, tolerance {tolerance:.0%})"


@dataclass(frozen=True)
class Suspicion:
    """The suspicion policy: when to re-measure and when a re-measurement confirms.

    Attributes:
        threshold: speedup (x) above which a result is re-measured.
        best_factor: re-measure above this many times the task's best speedup so far.
        tolerance: largest relative disagreement between the two speedups that confirms.
    """

    threshold: float = 3.0
    best_factor: float = 2.0
    tolerance: float = 0.10

    def __post_init__(self) -> None:
        if not (self.threshold > 0 and self.best_factor > 0 and 0 <= self.tolerance < 1):
            raise ValueError(f"Suspicion needs threshold > 0, best_factor > 0 and 0 <= tolerance < 1, got {self}")

    def is_suspicious(self, speedup: float | None, best_so_far: float | None = None) -> bool:
        """See :func:`is_suspicious`; e.g. ``Suspicion(threshold=2).is_suspicious(2.5) is True``."""
        return is_suspicious(speedup, best_so_far, self.threshold, self.best_factor)

    def confirm(self, first: EvalResult, remeasure: EvalResult) -> tuple[bool, str]:
        """See :func:`confirm` (with this policy's tolerance)."""
        return confirm(first, remeasure, self.tolerance)

    def review(self, result: EvalResult, remeasure: Callable[[EvalResult], EvalResult],
               best_so_far: float | None = None) -> EvalResult:
        """Re-measure ``result`` if it is suspicious; return the result to reward.

        ``remeasure(result)`` must evaluate the same task and candidate again (on another GPU where
        there is one) and return the new EvalResult. A confirmed result keeps the smaller of the two
        speedups and gains the flag ``remeasured``; a refuted one becomes ``rejected`` with the flag
        ``remeasure_disagrees``, and both speedups are kept in ``timing["remeasured_speedups"]``.

        Example:
            >>> r = EvalResult(task="t", status="ok", speedup=6.0)
            >>> Suspicion().review(r, lambda r: r.replace(speedup=1.2)).status
            'rejected'
        """
        if not result.ok or not self.is_suspicious(result.speedup, best_so_far):
            return result
        second = remeasure(result)
        ok, reason = self.confirm(result, second)
        speedups = [result.speedup, second.speedup]
        timing = {**result.timing, "remeasured_speedups": speedups, "remeasure_reason": reason}
        if ok:
            return result.replace(speedup=min(result.speedup, second.speedup), timing=timing,
                                  flags=(*result.flags, "remeasured"))
        return result.replace(status="rejected", speedup=None, speedup_ci=None, timing=timing,
                              flags=(*result.flags, "remeasure_disagrees"),
                              reason=f"suspicious speedup {result.speedup:.2f}x not confirmed: {reason}")
