"""HarnessReward: parsing, gating, shaping, suspicion re-measurement, the checker and its metrics.

The evaluator here is scripted (a function returning chosen EvalResults) so the reward's own logic is tested
in milliseconds; the real harness behind it is exercised in test_stages.py and test_evaluators.py."""

from __future__ import annotations

import json
import math

import pytest

from cudal1.harness import EvalConfig, EvalResult, Task
from cudal1.policy import rewarding
from cudal1.policy.rewarding import HarnessReward, parse_completion
from cudal1.rewards import HackStore, RewardChecker, RewardConfig

TASK = Task(name="t", source="import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
CODE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clone()\n"
GOOD = f"## Performance Analysis\nslow\n\n## Algorithm Design\nfast\n\n## Code Implementation\n```python\n{CODE}```\n"
CODE_ONLY = f"```python\n{CODE}```"
NO_CODE = "I would write a kernel."


class Scripted:
    """evaluate(pairs, run=...) returning the next scripted results; records what it was asked."""

    def __init__(self, *results):
        self.results, self.calls = list(results), []

    def __call__(self, pairs, run=""):
        self.calls.append((list(pairs), run))
        out, self.results = self.results[: len(pairs)], self.results[len(pairs):]
        return out


def ok(speedup, flags=()):
    """An ok result whose 95% interval is +-1% around its speedup (a measured speedup counts)."""
    return EvalResult(task="t", status="ok", speedup=speedup, flags=tuple(flags),
                      speedup_ci=(0.99 * speedup, 1.01 * speedup))


def reward_fn(ev, **kw):
    kw.setdefault("suspicion", None)
    return HarnessReward(tasks={"t": TASK}, evaluate=ev, eval_config=EvalConfig(), config=RewardConfig(mode="ratio"),
                         run="r1", **kw)


def test_parse_completion_formats():
    assert parse_completion(GOOD).well_formed and "ModelNew" in parse_completion(GOOD).code
    p = parse_completion(CODE_ONLY)
    assert not p.well_formed and p.code and "Performance Analysis" in p.problem
    assert parse_completion(NO_CODE).code is None


def test_statuses_format_and_metrics():
    ev = Scripted(ok(2.0), EvalResult(task="t", status="incorrect"), ok(1.5))
    metrics = {}
    r = reward_fn(ev)
    got = r(["p"] * 4, [[{"role": "assistant", "content": x}] for x in (GOOD, GOOD, NO_CODE, CODE_ONLY)], ["t"] * 4,
            log_metric=metrics.__setitem__)
    assert got == [2.0, -0.5, -1.0, 1.5 - 0.2]
    (pairs, run), = ev.calls
    assert len(pairs) == 3 and run == "r1" and all(c.origin == "policy" for _, c in pairs)
    assert metrics["format_rate"] == 0.5 and metrics["correct_rate"] == 0.5 and metrics["code_rate"] == 0.75
    assert metrics["mean_speedup"] == 1.75 and r.best == {"t": 2.0}


def test_unknown_task_is_an_error():
    with pytest.raises(KeyError, match="does not train on"):
        reward_fn(Scripted())(["p"], [GOOD], ["other"])


def test_suspicious_speedup_is_remeasured_and_rejected_on_disagreement(monkeypatch):
    """Adversarial: a candidate that times fast once (e.g. a lucky or gamed measurement) but not again."""
    seen = []
    monkeypatch.setattr(rewarding, "harness_evaluate", lambda task, cand, cfg: seen.append(cand) or ok(1.1))
    r = reward_fn(Scripted(ok(6.0)), suspicion=rewarding.Suspicion())
    (value,) = r(["p"], [GOOD], ["t"])
    assert value == -1.0 and len(seen) == 1  # rejected value
    assert "t" not in r.best


def test_confirmed_suspicious_speedup_keeps_the_smaller(monkeypatch):
    monkeypatch.setattr(rewarding, "harness_evaluate", lambda task, cand, cfg: ok(5.8))
    r = reward_fn(Scripted(ok(6.0)), suspicion=rewarding.Suspicion())
    (value,) = r(["p"], [GOOD], ["t"])
    assert value == 5.8 and r.best["t"] == 5.8


def test_without_suspicion_the_fast_result_would_count(monkeypatch):
    """The rule above is what rejects: with suspicion off the same scripted 6x is rewarded as 6."""
    monkeypatch.setattr(rewarding, "harness_evaluate", lambda task, cand, cfg: pytest.fail("must not re-measure"))
    (value,) = reward_fn(Scripted(ok(6.0)))(["p"], [GOOD], ["t"])
    assert value == 6.0


def test_checker_rejects_a_flagged_hack_and_stores_suspects(tmp_path):
    checker = RewardChecker(HackStore(tmp_path / "h.sqlite"))
    r = reward_fn(Scripted(ok(3.0, ["monkeypatch"]), ok(2.0, ["side_stream"]), ok(1.2)), checker=checker)
    other = GOOD.replace("x.clone()", "x + 0")
    third = GOOD.replace("x.clone()", "x * 1")
    values = r(["p"] * 3, [GOOD, other, third], ["t"] * 3)
    # the hack gets the rejected value; a suspect is stored and, with no judge to clear it, earns no speedup
    assert values == [-1.0, RewardConfig().unverified, 1.2]
    assert r.best["t"] == 1.2  # neither the hack's 3x nor the suspect's 2x becomes the task's best
    assert [c.verdict for c in checker.store.list()] == ["confirmed", "suspected"]


def test_known_hack_code_is_rejected_even_without_flags(tmp_path):
    checker = RewardChecker(HackStore(tmp_path / "h.sqlite"))
    r = reward_fn(Scripted(ok(3.0, ["monkeypatch"]), ok(2.5)), checker=checker)
    assert r(["p", "p"], [GOOD, GOOD], ["t", "t"]) == [-1.0, -1.0]


def test_a_flagged_result_is_not_paid_even_without_the_checker():
    (value,) = reward_fn(Scripted(ok(3.0, ["monkeypatch"])))(["p"], [GOOD], ["t"])
    assert value == RewardConfig().unverified
    (value,) = reward_fn(Scripted(ok(3.0, ["side_stream"])))(["p"], [GOOD], ["t"])
    assert value == RewardConfig().unverified


def test_a_judge_clears_a_suspect_and_its_speedup_is_paid(tmp_path):
    cleared = RewardChecker(HackStore(tmp_path / "a.sqlite"), judge=lambda prompt: "Looks fine.\nOK")
    (value,) = reward_fn(Scripted(ok(2.0, ["side_stream"])), checker=cleared)(["p"], [GOOD], ["t"])
    assert value == 2.0
    refused = RewardChecker(HackStore(tmp_path / "b.sqlite"), judge=lambda prompt: "A second stream races.\nHACK")
    (value,) = reward_fn(Scripted(ok(2.0, ["side_stream"])), checker=refused)(["p"], [GOOD], ["t"])
    assert value == RewardConfig().rejected


def test_a_copy_of_the_reference_ranks_below_every_failure_in_its_group(tmp_path):
    ev = Scripted(ok(1.0, ["same_as_reference"]), EvalResult(task="t", status="compile_error"),
                  EvalResult(task="t", status="incorrect"), ok(1.3))
    log = tmp_path / "completions.jsonl"
    r = reward_fn(ev, completions_log=log, stage="grpo:round0")
    texts = [GOOD, GOOD.replace("x.clone()", "x("), GOOD.replace("x.clone()", "-x"), GOOD.replace("clone", "copy")]
    got = r(["p"] * 4, texts, ["t"] * 4)
    assert got[0] == min(got) and got[0] <= got[1] and got[3] == max(got)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [x["status"] for x in rows] == ["ok", "compile_error", "incorrect", "ok"]
    assert rows[0]["flags"] == ["same_as_reference"] and not rows[0]["improves"] and rows[3]["improves"]
    assert rows[1]["text"] == texts[1] and rows[0]["stage"] == "grpo:round0" and rows[0]["reward"] == got[0]
    assert len({x["prompt_id"] for x in rows}) == 1
    assert r.history[-1]["novel_correct_rate"] == 0.25 and r.history[-1]["improved_rate"] == 0.25


def test_suspicious_speedups_are_remeasured_through_the_given_evaluator(monkeypatch):
    monkeypatch.setattr(rewarding, "harness_evaluate", lambda *a: pytest.fail("a cold pool was built"))
    asked = []
    r = reward_fn(Scripted(ok(6.0)), suspicion=rewarding.Suspicion(),
                  remeasure=lambda task, cand: asked.append(cand) or ok(5.9))
    (value,) = r(["p"], [GOOD], ["t"])
    assert value == 5.9 and len(asked) == 1


def test_group_smoothing_per_prompt_group():
    ev = Scripted(ok(1.0), ok(3.0), ok(2.0), ok(2.0))
    r = reward_fn(ev, smoothing=True, group_size=2)
    got = r(["a", "a", "b", "b"], [GOOD] * 4, ["t"] * 4)
    assert got[0] < 0 < got[1] and got[2] == got[3] == 0.0
    assert all(math.isfinite(v) and -1.5 <= v <= 1.5 for v in got)


def test_shuffled_reward_control_pays_earned_rewards_in_another_order_and_logs_both(tmp_path):
    """The learning experiment's control: the trainer gets the batch's rewards permuted (so they say nothing about
    the completion they are paid to), while the log and the metrics keep what each completion earned."""
    texts = [GOOD, NO_CODE, CODE_ONLY, GOOD, GOOD, NO_CODE]
    results = lambda: [ok(2.0), ok(1.5), ok(3.0), EvalResult(task="t", status="incorrect")]  # noqa: E731
    earned = reward_fn(Scripted(*results()))(["p"] * 6, texts, ["t"] * 6)
    assert earned == [2.0, -1.0, 1.5 - 0.2, 3.0, -0.5, -1.0]
    paid = []
    for seed in (0, 0, 1):
        log = tmp_path / f"c{len(paid)}.jsonl"
        metrics = {}
        r = reward_fn(Scripted(*results()), shuffle_seed=seed, completions_log=log)
        paid.append(r(["p"] * 6, texts, ["t"] * 6, log_metric=metrics.__setitem__))
        rows = [json.loads(x) for x in log.read_text().splitlines()]
        assert [x["true_reward"] for x in rows] == earned and [x["reward"] for x in rows] == paid[-1]
        assert metrics["reward_mean"] == pytest.approx(sum(earned) / 6)
    assert sorted(paid[0]) == sorted(earned) and paid[0] != earned  # a permutation, not the earned order
    assert paid[0] == paid[1] and paid[2] != paid[0]  # seeded: a control run can be repeated
    # without the control the log has no true_reward and the trainer gets the earned order
    log = tmp_path / "plain.jsonl"
    assert reward_fn(Scripted(*results()), completions_log=log)(["p"] * 6, texts, ["t"] * 6) == earned
    assert all("true_reward" not in json.loads(x) for x in log.read_text().splitlines())


# -- a verified answer that hands back an exemplar its prompt showed ----------------------------------------------
SHOWN = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, inp):\n        return inp.clone()\n"


def test_a_handed_back_shown_exemplar_earns_what_the_reference_handed_back_earns(tmp_path):
    """Adversarial: the prompt showed a verified 2x answer; the completion hands it back (its variable renamed, a
    comment and a docstring added). The harness measures it 2x again (it is the same code), and paid as measured,
    a GRPO group would give the copy the best advantage: it earns ``unchanged`` (the lowest), as the reference
    handed back does, and the task's best is not raised by it."""
    from cudal1.harness.novelty import source_identity

    copied = SHOWN.replace("inp", "x").replace("return x.clone()", '"""mine"""\n        return x.clone()  # fast')
    text = f"## Performance Analysis\na\n\n## Algorithm Design\nb\n\n## Code Implementation\n```python\n{copied}```\n"
    shown = [source_identity(SHOWN)]
    log = tmp_path / "c.jsonl"
    metrics = {}
    r = reward_fn(Scripted(ok(2.0)), completions_log=log)
    assert r(["p"], [text], ["t"], shown=[shown], log_metric=metrics.__setitem__) == [r.config.unchanged]
    assert r.best == {} and metrics["shown_copy_rate"] == 1.0
    row = json.loads(log.read_text())
    assert row["shown_copy"] is True and row["reward"] == r.config.unchanged and row["improves"] is True
    twin_log = tmp_path / "twin.jsonl"
    reward_fn(Scripted(ok(2.0)), completions_log=twin_log)(["p"], [text], ["t"], shown=[[]])
    assert json.loads(twin_log.read_text())["shown_copy"] is False  # every row says, so a missing key means "before"
    # the twin: the same answer where its prompt showed something else (or nothing) is the policy's own: paid
    other = reward_fn(Scripted(ok(2.0), ok(2.0)))
    elsewhere = [source_identity(CODE.replace("x.clone()", "x * 2"))]
    assert other(["p", "q"], [text, text], ["t", "t"], shown=[elsewhere, []]) == [2.0, 2.0]
    assert other.best == {"t": 2.0} and other.history[-1]["shown_copy_rate"] == 0.0
    # and a recipe that says so pays the copy as measured (the behaviour before the rule)
    paid = reward_fn(Scripted(ok(2.0)), shown_copies="paid")
    assert paid(["p"], [text], ["t"], shown=[shown]) == [2.0]
    # a copy that fails its run is a failure like any other
    failed = reward_fn(Scripted(EvalResult(task="t", status="incorrect")))
    assert failed(["p"], [text], ["t"], shown=[shown]) == [-0.5]
    with pytest.raises(ValueError, match="shown_copies"):
        reward_fn(Scripted(), shown_copies="half")


def _behaving(speedup, behaviour, spread=0.01):
    """An ok result that behaves as ``behaviour`` (EvalResult.integrity["behaviour"], as the harness keeps it)."""
    ci = ((1 - spread) * speedup, (1 + spread) * speedup)
    return EvalResult(task="t", status="ok", speedup=speedup, speedup_ci=ci, integrity={"behaviour": behaviour})


def test_a_copy_in_disguise_that_behaves_as_a_shown_exemplar_earns_what_a_copy_earns(tmp_path):
    """Adversarial: the prompt showed a verified 2x answer; the completion splits its one statement in two (a new
    source identity, so the source rule misses it) but dispatches the same operators and kernels (the same
    behaviour), and measures 2x again: it earns ``unchanged`` and does not raise the task's best. Twins: the same
    kernels launched better (a block size), measured clearly faster than the exemplar (its interval above
    BEHAVIOUR_MARGIN x 2), are paid; an answer that behaves otherwise is paid; a result without a behaviour (a store
    from before the harness kept it) is paid as before."""
    from cudal1.harness.novelty import source_identity
    from cudal1.policy.rewarding import BEHAVIOUR_MARGIN, shown_copy

    split = SHOWN.replace("return inp.clone()", "out = inp.clone()\n        return out")
    assert source_identity(split) != source_identity(SHOWN)
    text = f"## Performance Analysis\na\n\n## Algorithm Design\nb\n\n## Code Implementation\n```python\n{split}```\n"
    cols = {"shown": [[source_identity(SHOWN)]], "shown_behaviour": [["B"]], "shown_speedup": [[2.0]]}
    log = tmp_path / "c.jsonl"
    r = reward_fn(Scripted(_behaving(2.0, "B")), completions_log=log)
    assert r(["p"], [text], ["t"], **cols) == [r.config.unchanged]
    assert r.best == {} and r.history[-1]["shown_behaviour_copy_rate"] == 1.0
    row = json.loads(log.read_text())
    assert row["shown_copy"] is True and row["shown_copy_by"] == "behaviour"
    # measured a little faster than shown (re-measurement noise, inside the margin): still a copy
    assert shown_copy(split, _behaving(2.06, "B"), [], ["B"], [2.0]) == "behaviour"
    # the twins
    faster = 2.0 * BEHAVIOUR_MARGIN * 1.2
    tuned = reward_fn(Scripted(_behaving(faster, "B")))
    assert tuned(["p"], [text], ["t"], **cols) == [pytest.approx(faster)] and tuned.best == {"t": faster}
    assert reward_fn(Scripted(_behaving(2.0, "C")))(["p"], [text], ["t"], **cols) == [2.0]
    assert reward_fn(Scripted(ok(2.0)))(["p"], [text], ["t"], **cols) == [2.0]
    # the source rule still comes first: the exemplar itself handed back is a copy whatever it measures
    assert shown_copy(SHOWN, _behaving(9.0, "B"), [source_identity(SHOWN)], ["B"], [2.0]) == "source"
    # and a recipe that pays copies pays this one too
    assert reward_fn(Scripted(_behaving(2.0, "B")), shown_copies="paid")(["p"], [text], ["t"], **cols) == [2.0]
    with pytest.raises(ValueError, match="one speedup per shown_behaviour"):
        shown_copy(split, _behaving(2.0, "B"), [], ["B", "C"], [2.0])
