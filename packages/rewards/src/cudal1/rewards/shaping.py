"""EvalResult -> reward: gate on status, map the speedup, then let integrity flags zero or penalise it.

=============  ===================================================================  ==============
mode           reward of an ``ok`` result with speedup ``s`` (x), ``c = cap``       at parity (1x)
=============  ===================================================================  ==============
``ratio``      ``min(s, c)``                                                        1.0
``log``        ``ln(clamp(s, 1/c, c))``                                             0.0
``clipped``    ``clamp(s, 1/c, c) - 1``                                             0.0
=============  ===================================================================  ==============

A failing status gets its configured value instead (no speedup exists). Flags in ``zero_flags``
(default: the task is degenerate or failed itself, so its "speedup" means nothing) make an ``ok``
result's reward 0.0; each flag in ``flag_penalties`` subtracts its penalty from an ``ok`` reward.

Example:
    >>> from cudal1.harness.types import EvalResult
    >>> from cudal1.rewards.shaping import RewardConfig, speedup_reward
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=2.5))
    2.5
    >>> speedup_reward(EvalResult(task="t", status="compile_error"))
    -1.0
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=40.0), RewardConfig(mode="log", cap=10.0))
    2.302585092994046
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cudal1.harness.flags import flags_of_kind
from cudal1.harness.types import STATUSES, EvalResult

__all__ = ["FAILING_STATUSES", "MODES", "RewardConfig", "speedup_reward"]

#: Statuses that carry no speedup; each has its own configured reward.
FAILING_STATUSES: tuple[str, ...] = tuple(s for s in STATUSES if s != "ok")
#: How a speedup is mapped to a reward (see the module docstring).
MODES: tuple[str, ...] = ("ratio", "log", "clipped")


@dataclass(frozen=True)
class RewardConfig:
    """How :func:`speedup_reward` turns an EvalResult into a float.

    Attributes:
        compile_error, runtime_error, incorrect, rejected, timeout, task_error: reward of a result with that
            status (``task_error``: the task failed, not the candidate; neutral by default).
        mode: ``ratio``, ``log`` or ``clipped`` (see the module docstring).
        cap: largest speedup (x) that still earns more; > 1. Also the floor ``1/cap`` in log/clipped.
        flag_penalties: flag -> amount (>= 0) subtracted from an ``ok`` reward when the flag is present.
        zero_flags: flags that make an ``ok`` reward exactly 0.0 (checked before penalties).

    Example:
        >>> RewardConfig(mode="clipped", cap=5.0, flag_penalties={"timing_unstable": 0.25}).cap
        5.0
    """

    compile_error: float = -1.0
    runtime_error: float = -0.75
    incorrect: float = -0.5
    rejected: float = -1.0
    timeout: float = -0.5
    task_error: float = 0.0
    mode: str = "ratio"
    cap: float = 10.0
    flag_penalties: Mapping[str, float] = field(default_factory=dict, hash=False)
    zero_flags: frozenset[str] = flags_of_kind("task")

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"RewardConfig.mode must be one of {MODES}, got {self.mode!r}")
        if not (isinstance(self.cap, (int, float)) and math.isfinite(self.cap) and self.cap > 1.0):
            raise ValueError(f"RewardConfig.cap must be a finite speedup > 1 (e.g. 10.0), got {self.cap!r}")
        for status in FAILING_STATUSES:
            v = getattr(self, status)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ValueError(f"RewardConfig.{status} must be a finite float, got {v!r}")
        for flag, p in dict(self.flag_penalties).items():
            if not (isinstance(p, (int, float)) and math.isfinite(p) and p >= 0):
                raise ValueError(f"flag_penalties[{flag!r}] must be a finite amount >= 0 to subtract, got {p!r}")
        if isinstance(self.zero_flags, str):
            raise ValueError(f"zero_flags must be a collection of flag names, not the string {self.zero_flags!r}")
        object.__setattr__(self, "zero_flags", frozenset(self.zero_flags))
        object.__setattr__(self, "flag_penalties", MappingProxyType(dict(self.flag_penalties)))

    def status_value(self, status: str) -> float:
        """Reward of a failing status, e.g. ``RewardConfig().status_value("incorrect") == -0.5``."""
        if status not in FAILING_STATUSES:
            raise ValueError(f"{status!r} is not a failing status; failing statuses are {FAILING_STATUSES}")
        return float(getattr(self, status))


def _map_speedup(s: float, config: RewardConfig) -> float:
    c = config.cap
    if config.mode == "ratio":
        return min(s, c)
    clamped = min(max(s, 1.0 / c), c)
    if config.mode == "log":
        return math.log(clamped)
    return clamped - 1.0


def speedup_reward(result: EvalResult, config: RewardConfig | None = None) -> float:
    """The reward of one evaluated candidate.

    Args:
        result: the harness's verdict; ``result.speedup`` is reference time / candidate time (x).
        config: the reward settings (defaults: :class:`RewardConfig()`).
    Returns:
        The status's value for a failing result; for an ``ok`` one the mapped speedup, 0.0 if a
        zero flag is present, minus the penalties of its flags.
    Raises:
        ValueError: an ``ok`` result without a finite positive speedup (the harness never makes one;
            evaluate again rather than guess).

    Example:
        >>> cfg = RewardConfig(flag_penalties={"timing_unstable": 0.5})
        >>> speedup_reward(EvalResult(task="t", status="ok", speedup=2.0, flags=("timing_unstable",)), cfg)
        1.5
    """
    config = config if config is not None else RewardConfig()
    if result.status != "ok":
        return config.status_value(result.status)
    s = result.speedup
    if s is None or not (isinstance(s, (int, float)) and s > 0 and not math.isnan(s)):
        raise ValueError(f"ok result of task {result.task!r} has no positive speedup ({s!r}); re-evaluate it")
    if config.zero_flags.intersection(result.flags):
        return 0.0
    reward = _map_speedup(float(s), config)
    for flag in dict.fromkeys(result.flags):
        reward -= config.flag_penalties.get(flag, 0.0)
    return reward
