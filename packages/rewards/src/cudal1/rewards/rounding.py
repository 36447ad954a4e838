"""Conservative rounding of speedups toward 1 (re-exported from the harness, which rounds every speedup).

Example:
    >>> from cudal1.rewards.rounding import round_toward_one
    >>> round_toward_one(1.118), round_toward_one(0.992), round_toward_one(0.5)
    (1.11, 1.0, 0.5)
"""

from __future__ import annotations

from cudal1.harness.timing import round_toward_one

__all__ = ["round_toward_one"]
