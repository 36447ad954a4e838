"""Every status, mode and flag path of speedup_reward."""

import math

import pytest

from cudal1.harness.types import EvalResult
from cudal1.rewards import RewardConfig, speedup_reward
from cudal1.rewards.shaping import FAILING_STATUSES


def ok(s, flags=()):
    return EvalResult(task="t", status="ok", speedup=s, flags=tuple(flags))


@pytest.mark.parametrize("status", FAILING_STATUSES)
def test_failing_status_gets_its_value(status):
    cfg = RewardConfig(**{status: -3.25})
    assert speedup_reward(EvalResult(task="t", status=status), cfg) == -3.25
    assert speedup_reward(EvalResult(task="t", status=status)) == getattr(RewardConfig(), status)


def test_failing_status_ignores_flags():
    r = EvalResult(task="t", status="incorrect", flags=("task_degenerate", "timing_unstable"))
    assert speedup_reward(r, RewardConfig(flag_penalties={"timing_unstable": 1.0})) == -0.5


@pytest.mark.parametrize("mode,s,cap,want", [
    ("ratio", 2.5, 10.0, 2.5), ("ratio", 0.4, 10.0, 0.4), ("ratio", 50.0, 10.0, 10.0),
    ("log", 1.0, 10.0, 0.0), ("log", 2.0, 10.0, math.log(2.0)), ("log", 50.0, 10.0, math.log(10.0)),
    ("log", 0.001, 10.0, math.log(0.1)),
    ("clipped", 1.0, 5.0, 0.0), ("clipped", 3.0, 5.0, 2.0), ("clipped", 9.0, 5.0, 4.0), ("clipped", 0.01, 5.0, -0.8),
])
def test_modes(mode, s, cap, want):
    assert speedup_reward(ok(s), RewardConfig(mode=mode, cap=cap)) == pytest.approx(want)


def test_zero_flags_and_penalties():
    cfg = RewardConfig(flag_penalties={"timing_unstable": 0.5, "gpu_throttled": 0.25})
    assert speedup_reward(ok(3.0, ["task_degenerate"]), cfg) == 0.0
    assert speedup_reward(ok(3.0, ["task_error", "timing_unstable"]), cfg) == 0.0
    assert speedup_reward(ok(3.0, ["timing_unstable"]), cfg) == 2.5
    assert speedup_reward(ok(3.0, ["timing_unstable", "gpu_throttled", "timing_unstable"]), cfg) == 2.25
    assert speedup_reward(ok(3.0, ["uses_custom_kernel"]), cfg) == 3.0
    zero_unstable = RewardConfig(zero_flags={"timing_unstable"})
    assert speedup_reward(ok(3.0, ["timing_unstable"]), zero_unstable) == 0.0
    assert speedup_reward(ok(3.0, ["task_degenerate"]), zero_unstable) == 3.0


def test_ok_without_speedup_raises():
    with pytest.raises(ValueError, match="re-evaluate"):
        speedup_reward(EvalResult(task="t", status="ok"))
    with pytest.raises(ValueError, match="re-evaluate"):
        speedup_reward(ok(0.0))


@pytest.mark.parametrize("kwargs,match", [
    ({"mode": "linear"}, "mode"), ({"cap": 1.0}, "cap"), ({"cap": float("inf")}, "cap"),
    ({"incorrect": float("nan")}, "incorrect"), ({"flag_penalties": {"x": -1.0}}, "flag_penalties"),
    ({"zero_flags": "task_degenerate"}, "zero_flags"),
])
def test_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RewardConfig(**kwargs)


def test_config_is_frozen():
    cfg = RewardConfig(flag_penalties={"a": 1.0})
    with pytest.raises(TypeError):
        cfg.flag_penalties["b"] = 2.0  # type: ignore[index]
    assert cfg == RewardConfig(flag_penalties={"a": 1.0})
