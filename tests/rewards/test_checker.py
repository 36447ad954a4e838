"""RewardChecker: rules, a fake judge, and stored verdicts."""

from cudal1.harness.types import EvalResult
from cudal1.rewards import HackStore, RewardChecker, parse_judge_reply

CAND = "class ModelNew:\n    def forward(self, x):\n        return x\n"
REF = "class Model:\n    def forward(self, x):\n        return x * 2\n"


def res(*flags, status="ok"):
    return EvalResult(task="t", status=status, speedup=2.0 if status == "ok" else None, flags=flags)


class FakeJudge:
    def __init__(self, reply):
        self.reply = reply
        self.prompts = []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        return self.reply


def test_rules_only():
    store = HackStore(":memory:")
    c = RewardChecker(store)
    assert c.check(CAND, res()).verdict == "ok" and len(store) == 0
    v = c.check(CAND, res("monkeypatch", status="rejected"))
    assert v.verdict == "hack" and v.decided_by == "rules" and store.get(v.case_id).verdict == "confirmed"
    v = c.check("import torch\ns = torch.cuda.Stream()\n", res("side_stream"))
    assert v.verdict == "suspect" and store.get(v.case_id).verdict == "suspected"


def test_known_hack_fingerprint_matches_without_flags():
    store = HackStore(":memory:")
    store.add(CAND, "confirmed", decided_by="person:bob")
    v = RewardChecker(store).check(CAND.replace("x", "y"), res())
    assert v.is_hack and "confirmed hack case" in v.reason


def test_judge_sees_candidate_reference_and_similar_cases():
    store = HackStore(":memory:")
    for i in range(4):
        store.add(f"import torch\nv{i} = torch.cuda.Stream()\n" + "x = 1\n" * i, "confirmed", decided_by="rules",
                  note=f"case {i}")
    judge = FakeJudge("It hides the matmul on a side stream.\nHACK")
    v = RewardChecker(store, judge=judge, judge_name="fake").check(CAND, res("side_stream"), reference=REF)
    assert v.is_hack and v.decided_by == "judge:fake"
    prompt = judge.prompts[0]
    assert CAND.strip() in prompt and REF.strip() in prompt and "side_stream" in prompt
    assert prompt.count("### Case") == 3
    stored = store.get(v.case_id)
    assert stored.verdict == "confirmed" and stored.decided_by == "judge:fake" and "side stream" in stored.note


def test_judge_ok_is_stored_as_cleared_and_garbage_keeps_suspect():
    store = HackStore(":memory:")
    v = RewardChecker(store, judge=FakeJudge("Looks fine.\nVerdict: OK")).check(CAND, res("threads"))
    assert v.verdict == "ok" and store.get(v.case_id).verdict == "cleared"
    v = RewardChecker(store, judge=FakeJudge("I cannot tell")).check(CAND, res("threads"))
    assert v.verdict == "suspect" and store.get(v.case_id).verdict == "suspected"
    assert "no HACK/OK line" in v.reason


def test_judge_not_called_for_clean_or_rule_hacks():
    judge = FakeJudge("HACK")
    c = RewardChecker(HackStore(":memory:"), judge=judge)
    c.check(CAND, res())
    c.check(CAND, res("introspection", status="rejected"))
    assert judge.prompts == []


def test_parse_judge_reply():
    assert parse_judge_reply("blah\nOK\n") == "OK"
    assert parse_judge_reply("**HACK**") == "HACK"
    assert parse_judge_reply("OK at first\nbut then\nhack.") == "HACK"
    assert parse_judge_reply("") is None
