"""Group smoothing of rewards: normalise within a group, then clip (an option next to GRPO's own
normalisation, which keeps one wild speedup from dominating a group).

Example:
    >>> from cudal1.rewards.smoothing import group_smooth
    >>> [round(r, 3) for r in group_smooth([1.0, 2.0, 3.0])]
    [-1.225, 0.0, 1.225]
    >>> group_smooth([2.0, 2.0])
    [0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["group_smooth"]


def group_smooth(rewards: Sequence[float], clip: tuple[float, float] | None = (-1.5, 1.5)) -> list[float]:
    """Normalise ``rewards`` of one group to mean 0 and (population) std 1, then clip to ``clip``.

    Args:
        rewards: the group's rewards (any length; finite floats).
        clip: ``(low, high)`` bounds applied after normalising, or None for no clipping.
    Returns:
        One smoothed value per reward, same order. A group whose rewards are all equal (std 0, or
        below 1e-12 relative) gives zeros: nothing in it is better than anything else.
    Raises:
        ValueError: a reward is not finite, or ``clip`` has low > high.
    """
    values = [float(r) for r in rewards]
    bad = [r for r in values if not math.isfinite(r)]
    if bad:
        raise ValueError(f"group_smooth needs finite rewards, got {bad[:3]}; map failures to finite values first")
    if clip is not None and not clip[0] <= clip[1]:
        raise ValueError(f"clip must be (low, high) with low <= high, got {clip}")
    if not values:
        return []
    n = len(values)
    mean = math.fsum(values) / n
    std = math.sqrt(math.fsum((r - mean) ** 2 for r in values) / n)
    if std <= 1e-12 * max(1.0, abs(mean)):
        return [0.0] * n
    out = [(r - mean) / std for r in values]
    if clip is not None:
        lo, hi = clip
        out = [min(max(v, lo), hi) for v in out]
    return out
