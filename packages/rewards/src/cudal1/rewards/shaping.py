"""EvalResult -> reward: pay only real improvement.

The rule, in order (one rule, read from the harness's flag registry, :mod:`cudal1.harness.flags`):

=================================================  ================================  =========================
result                                             reward                            why
=================================================  ================================  =========================
failing status (compile_error, incorrect ...)      its configured value              no speedup exists
``ok`` with a ``task`` flag (degenerate task)      0.0                               the task's fault, not the
                                                                                     candidate's
``ok`` + ``same_as_reference``                     ``unchanged`` (<= every failure,  a copy of the reference
                                                   default: the lowest)              must never outrank trying:
                                                                                     in a GRPO group it would
                                                                                     get the best advantage
``ok`` not verified (suspect flag), not cleared    ``unverified`` (below parity)     a flagged speedup often
                                                                                     hides a hack; a judge can
                                                                                     clear it (``cleared``)
``ok``, speedup CI above 1 or below 1              mapped speedup minus penalties    evidence either way
``ok``, speedup CI contains 1                      mapped 1x (parity) minus          no evidence of a change:
                                                   penalties                         not paid as a speedup
=================================================  ================================  =========================

The CI is the unrounded 95% interval the harness measured (``EvalResult.speedup_ci``): a 1.04x whose interval
reaches 0.98 earns parity, not 1.04x; a result without an interval earns parity.

=============  ===================================================================  ==============
mode           reward of a speedup ``s`` (x), ``c = cap``                           at parity (1x)
=============  ===================================================================  ==============
``ratio``      ``min(s, c)``                                                        1.0
``log``        ``ln(clamp(s, 1/c, c))``                                             0.0
``clipped``    ``clamp(s, 1/c, c) - 1``                                             0.0
=============  ===================================================================  ==============

Each flag in ``flag_penalties`` subtracts its penalty from an ``ok`` reward that is paid a speedup.

Example:
    >>> from cudal1.harness.types import EvalResult
    >>> from cudal1.rewards.shaping import RewardConfig, speedup_reward
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=2.5, speedup_ci=(2.4, 2.6)))
    2.5
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=1.03, speedup_ci=(0.98, 1.08)))
    1.0
    >>> speedup_reward(EvalResult(task="t", status="compile_error"))
    -1.0
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=1.0, speedup_ci=(0.99, 1.01), flags=("same_as_reference",)))
    -1.0
    >>> speedup_reward(EvalResult(task="t", status="ok", speedup=40.0, speedup_ci=(38.0, 42.0)), RewardConfig(mode="log", cap=10.0))
    2.302585092994046
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cudal1.harness.flags import flags_of_kind, kind_of
from cudal1.harness.types import STATUSES, EvalResult

__all__ = ["CANDIDATE_FAILURES", "FAILING_STATUSES", "MODES", "RewardConfig", "paid_speedup", "speedup_reward"]

#: Statuses that carry no speedup; each has its own configured reward.
FAILING_STATUSES: tuple[str, ...] = tuple(s for s in STATUSES if s != "ok")
#: Failing statuses that are the candidate's own doing (``task_error`` is the task's): a copy of the reference
#: earns no more than any of them.
CANDIDATE_FAILURES: tuple[str, ...] = tuple(s for s in FAILING_STATUSES if s != "task_error")
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
        zero_flags: flags that make an ``ok`` reward exactly 0.0 (checked first: the task's fault).
        unchanged: reward of an ``ok`` that is the reference (flag ``same_as_reference``); at most the lowest
            value of :data:`CANDIDATE_FAILURES`, which is its default (None).
        unverified: reward of an ``ok`` with a suspect (or unknown) flag that no judge cleared; below the
            reward at parity.

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
    unchanged: float | None = None
    unverified: float = -0.5

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
        worst = min(getattr(self, st) for st in CANDIDATE_FAILURES)
        if self.unchanged is None:
            object.__setattr__(self, "unchanged", float(worst))
        for name in ("unchanged", "unverified"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ValueError(f"RewardConfig.{name} must be a finite float, got {v!r}")
        if self.unchanged > worst:
            raise ValueError(f"RewardConfig.unchanged ({self.unchanged}) must be <= every candidate failure's reward "
                             f"(lowest: {worst}): a copy of the reference must not outrank an attempt that failed")
        if self.unverified >= _map_speedup(1.0, self):
            raise ValueError(f"RewardConfig.unverified ({self.unverified}) must be below the reward at parity "
                             f"({_map_speedup(1.0, self)} in mode {self.mode}): an unverified speedup earns none")
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


def paid_speedup(result: EvalResult) -> float:
    """The speedup (x) a reward pays for an ``ok`` result: its measured speedup when the 95% confidence
    interval lies wholly above or below 1, else 1.0 (parity; also without an interval).

    Example:
        >>> from cudal1.harness.types import EvalResult
        >>> paid_speedup(EvalResult(task="t", status="ok", speedup=0.8, speedup_ci=(0.78, 0.82)))
        0.8
        >>> paid_speedup(EvalResult(task="t", status="ok", speedup=1.01, speedup_ci=(1.0, 1.02)))
        1.0
    """
    s = float(result.speedup or 1.0)
    ci = result.speedup_ci
    if ci is None or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in ci):
        return 1.0
    return s if ci[0] > 1.0 or ci[1] < 1.0 else 1.0


def speedup_reward(result: EvalResult, config: RewardConfig | None = None, *, cleared: bool = False) -> float:
    """The reward of one evaluated candidate (the rule in the module docstring).

    Args:
        result: the harness's verdict; ``result.speedup`` is reference time / candidate time (x).
        config: the reward settings (defaults: :class:`RewardConfig()`).
        cleared: a judge looked at this result's suspect flags and found no hack (see
            :class:`cudal1.rewards.RewardChecker`); reject and task flags are never cleared.
    Returns:
        The status's value for a failing result; for an ``ok`` one 0.0 (task flag), ``unchanged``,
        ``unverified``, or the mapped :func:`paid_speedup` minus the penalties of its flags.
    Raises:
        ValueError: an ``ok`` result without a finite positive speedup (the harness never makes one;
            evaluate again rather than guess).

    Example:
        >>> cfg = RewardConfig(flag_penalties={"timing_unstable": 0.5})
        >>> r = EvalResult(task="t", status="ok", speedup=2.0, speedup_ci=(1.9, 2.1), flags=("timing_unstable",))
        >>> speedup_reward(r, cfg)
        1.5
        >>> flagged = EvalResult(task="t", status="ok", speedup=3.0, speedup_ci=(2.9, 3.1), flags=("side_stream",))
        >>> speedup_reward(flagged, cfg), speedup_reward(flagged, cfg, cleared=True)
        (-0.5, 3.0)
    """
    config = config if config is not None else RewardConfig()
    if result.status != "ok":
        return config.status_value(result.status)
    s = result.speedup
    if s is None or not (isinstance(s, (int, float)) and s > 0 and not math.isnan(s)):
        raise ValueError(f"ok result of task {result.task!r} has no positive speedup ({s!r}); re-evaluate it")
    if config.zero_flags.intersection(result.flags):
        return 0.0
    if "same_as_reference" in result.flags:
        return float(config.unchanged or 0.0)
    untrusted = [f for f in result.flags if kind_of(f) == "reject" or (kind_of(f) == "suspect" and not cleared)]
    if untrusted:
        return float(config.unverified)
    reward = _map_speedup(paid_speedup(result), config)
    for flag in dict.fromkeys(result.flags):
        reward -= config.flag_penalties.get(flag, 0.0)
    return reward
