"""The run summary's plain-words section (issue 42 item 7): what improved and what did not, from a run's figures."""

from __future__ import annotations

from cudal1.policy.pipeline import plain_words


def test_plain_words_say_what_moved_and_what_did_not():
    fig = {"evaluations": {"base": {"format_rate": 0.0, "correct_at_1": 0.0, "best_of_k_geomean": 1.0},
                           "sft": {"format_rate": 0.5, "correct_at_1": 0.25, "best_of_k_geomean": 1.0},
                           "grpo": {"format_rate": 0.75, "correct_at_1": 0.0, "best_of_k_geomean": 1.0}},
           "steps": [{"format_rate": 0.25, "reward_mean": -0.1}, {"format_rate": 0.5, "reward_mean": 0.02}],
           "best_speedup_per_task": {}, "self_train": [{"samples": 8, "well_formed": 7}]}
    words = plain_words(fig)
    assert ("on train tasks right after SFT (the first self-training round's samples), 7 of 8 answers were in the "
            "response format") in words
    assert "held-out tasks, answers in the response format: rose from 0.00 (base) to 0.75 (grpo)" in words
    assert "held-out tasks, correct at the first try (correct@1): stayed at 0.00 (base to grpo)" in words
    assert "held-out tasks, best-of-k geomean speedup: stayed at 1.000x (base to grpo)" in words
    assert any(w.startswith("after SFT the policy answered in the response format on 50%") for w in words)
    assert any("format rate 0.25 in its first step, 0.50 in its last (2 steps)" in w for w in words)
    assert any(w.startswith("no verified improvement") for w in words)
    assert "not that the policy learns" in words[-1]


def test_plain_words_name_real_improvements_and_survive_a_run_without_evaluations():
    words = plain_words({"best_speedup_per_task": {"relu": 1.31}, "steps": [], "evaluations": {}})
    assert words[0] == "verified improvements on train tasks: relu 1.31x" and len(words) == 2
