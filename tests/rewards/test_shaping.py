"""Every status, mode and flag path of speedup_reward."""

import math

import pytest

from cudal1.harness.types import EvalResult
from cudal1.rewards import RewardConfig, speedup_reward
from cudal1.rewards.shaping import FAILING_STATUSES


def ok(s, flags=(), ci=None):
    """An ok result whose confidence interval is +-1% around ``s`` (so it counts, unless s is 1)."""
    return EvalResult(task="t", status="ok", speedup=s, flags=tuple(flags), speedup_ci=ci or (0.99 * s, 1.01 * s))


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


# -- the improvement rule: a copy never outranks a failure, a flag is no speedup, the CI decides -------------

def test_a_reference_copy_earns_no_more_than_any_failure_and_a_real_speedup_more():
    for mode in ("ratio", "log", "clipped"):
        cfg = RewardConfig(mode=mode)
        copy = speedup_reward(ok(1.0, ["same_as_reference"], ci=(0.97, 1.03)), cfg)
        # even a copy that happened to measure faster (noise) is paid as a copy
        lucky_copy = speedup_reward(ok(1.2, ["same_as_reference"]), cfg)
        failures = [speedup_reward(EvalResult(task="t", status=s), cfg) for s in FAILING_STATUSES if s != "task_error"]
        assert copy <= min(failures) and lucky_copy <= min(failures), mode
        honest = speedup_reward(ok(1.3), cfg)
        parity_rewrite = speedup_reward(ok(1.0, ci=(0.97, 1.03)), cfg)
        assert honest > parity_rewrite > max(failures) >= copy, mode


def test_in_a_grpo_group_the_copy_gets_no_positive_advantage():
    cfg = RewardConfig(mode="log")
    group = [ok(1.0, ["same_as_reference"]), EvalResult(task="t", status="compile_error"),
             EvalResult(task="t", status="incorrect"), ok(1.25)]
    rewards = [speedup_reward(r, cfg) for r in group]
    mean = sum(rewards) / len(rewards)
    assert rewards[0] - mean < 0 < rewards[3] - mean
    assert rewards[0] == min(rewards)


def test_a_flagged_speedup_is_not_paid_unless_a_judge_cleared_it():
    cfg = RewardConfig(mode="log")
    for flag in ("reduced_precision", "side_stream", "threads", "stateful_forward", "exception_fallback",
                 "library_flag", "not_a_registered_flag"):
        r = ok(3.0, [flag])
        assert speedup_reward(r, cfg) == cfg.unverified < speedup_reward(ok(1.0, ci=(0.99, 1.01)), cfg), flag
        assert speedup_reward(r, cfg, cleared=True) == pytest.approx(math.log(3.0)), flag
    # a reject flag is never cleared (it cannot be on an ok from the harness, but a stored row could be edited)
    assert speedup_reward(ok(3.0, ["timing_disagrees"]), cfg, cleared=True) == cfg.unverified
    # measurement and descriptive flags are no reason to withhold the speedup
    assert speedup_reward(ok(3.0, ["uses_custom_kernel", "remeasured"]), cfg) == pytest.approx(math.log(3.0))
    assert speedup_reward(ok(3.0, ["cuda_graph"]), cfg) == pytest.approx(math.log(3.0))  # graphs are allowed


def test_a_speedup_counts_only_when_its_interval_clears_one():
    cfg = RewardConfig(mode="ratio")
    assert speedup_reward(ok(1.04, ci=(0.98, 1.09)), cfg) == 1.0  # no evidence: parity
    assert speedup_reward(ok(1.01, ci=(1.004, 1.016)), cfg) == pytest.approx(1.01)  # tight: it counts
    assert speedup_reward(ok(1.01, ci=(0.996, 1.016)), cfg) == 1.0  # rounded up to 1.01, interval reaches below 1
    assert speedup_reward(ok(0.8, ci=(0.78, 0.83)), cfg) == pytest.approx(0.8)  # a real slowdown is paid as one
    assert speedup_reward(EvalResult(task="t", status="ok", speedup=2.0), cfg) == 1.0  # no interval: parity


@pytest.mark.parametrize("kwargs,match", [
    ({"unchanged": -0.6}, "unchanged"), ({"compile_error": -2.0, "unchanged": -1.5}, "unchanged"),
    ({"unverified": 0.0, "mode": "log"}, "unverified"), ({"unverified": 1.0, "mode": "ratio"}, "unverified"),
])
def test_rule_values_that_would_pay_a_copy_or_a_flag_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RewardConfig(**kwargs)
    assert RewardConfig(compile_error=-2.0).unchanged == -2.0  # the default follows the lowest failure
