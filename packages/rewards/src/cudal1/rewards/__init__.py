"""cudal1.rewards: EvalResult -> reward; group smoothing; suspicion re-measurement; hack-case store and checker.

    from cudal1.rewards import RewardConfig, speedup_reward, group_smooth
    rewards = [speedup_reward(r, RewardConfig(mode="log")) for r in results]
    advantages = group_smooth(rewards)                    # mean 0, std 1, clipped to [-1.5, 1.5]
"""

from .checker import CheckVerdict, RewardChecker, build_judge_prompt, parse_judge_reply
from .fingerprint import fingerprint
from .hack_store import HackCase, HackStore, HackStoreError, Match
from .rounding import round_toward_one
from .shaping import RewardConfig, paid_speedup, speedup_reward
from .smoothing import group_smooth
from .suspicion import Suspicion, confirm, is_suspicious

__all__ = [
    "CheckVerdict",
    "HackCase",
    "HackStore",
    "HackStoreError",
    "Match",
    "RewardChecker",
    "RewardConfig",
    "Suspicion",
    "build_judge_prompt",
    "confirm",
    "fingerprint",
    "group_smooth",
    "is_suspicious",
    "paid_speedup",
    "parse_judge_reply",
    "round_toward_one",
    "speedup_reward",
]
