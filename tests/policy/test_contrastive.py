"""Contrastive prompts rebuilt from the results store."""

from __future__ import annotations

import random

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore
from cudal1.policy.contrastive import build_prompt_rows, exemplars_from_store
from cudal1.policy.tasks import select_tasks

CFG = EvalConfig()


def code(i: int) -> str:
    return f"import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * {i}\n"


def test_exemplars_come_from_this_tasks_results(tmp_path):
    relu, softmax = select_tasks("builtin", ["relu", "softmax"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    full_relu = select_tasks("builtin", ["relu"])[0]
    for i, (status, sp) in enumerate([("ok", 1.5), ("incorrect", None), ("ok", 3.0)]):
        store.add(EvalResult(task="relu", status=status, speedup=sp, task_hash=relu.hash), relu,
                  Candidate(code(i), "relu"), CFG)
    # the same source measured again: only its newest measurement counts
    store.add(EvalResult(task="relu", status="ok", speedup=1.7, task_hash=relu.hash), relu, Candidate(code(0), "relu"), CFG)
    # the full-size relu (another task hash) and another task: not exemplars of the resized relu
    store.add(EvalResult(task="relu", status="ok", speedup=9.0, task_hash=full_relu.hash), full_relu,
              Candidate(code(9), "relu"), CFG)
    store.add(EvalResult(task="softmax", status="ok", speedup=2.0, task_hash=softmax.hash), softmax,
              Candidate(code(5), "softmax"), CFG)
    ex = exemplars_from_store(store, relu)
    assert [(e.status, e.score) for e in ex] == [("incorrect", None), ("ok", 3.0), ("ok", 1.7)]

    rows = build_prompt_rows(store, [relu, softmax], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=2)
    assert [r["task"] for r in rows] == ["relu", "relu", "softmax", "softmax"]
    assert [r["exemplars"] for r in rows] == [2, 2, 1, 1]
    text = rows[0]["prompt"][0]["content"]
    assert "x * 2" in text and "x * 0" in text and "x * 9" not in text and "x * 1\n" not in text
    assert "BATCH = 4" in text and "## Performance Analysis" in text


def test_no_success_yet_shows_the_reference_and_budget_trims(tmp_path):
    (relu,) = select_tasks("builtin", ["relu"])
    store = ResultStore(tmp_path / "r.sqlite")
    rows = build_prompt_rows(store, [relu], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=len, max_tokens=100_000)
    # before any success the reference (as ModelNew, score 1.00) is the one exemplar
    assert rows[0]["exemplars"] == 1 and "class ModelNew" in rows[0]["prompt"][0]["content"]
    assert "score 1.00" in rows[0]["prompt"][0]["content"]
    for i in range(2):
        store.add(EvalResult(task="relu", status="ok", speedup=1.0 + i, task_hash=relu.hash), relu,
                  Candidate(code(i) * 50, "relu"), CFG)
    from cudal1.prompts import render_contrastive

    base = len(render_contrastive(relu.source, []))
    tight = build_prompt_rows(store, [relu], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                              count_tokens=len, max_tokens=base + 5000)
    assert tight[0]["exemplars"] == 1  # one exemplar fits the budget, the lower-scored one was dropped
    assert "x * 1" in tight[0]["prompt"][0]["content"]


def test_flagged_successes_are_not_shown_as_examples(tmp_path):
    """An 'ok' that carries an integrity flag (fp16 inside an fp32 task, a try/except fallback) would teach the
    policy the hack if its speedup were shown: GRPO and self-training prompts leave it out, as the search does."""
    (relu,) = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    rows_in = [("ok", 5.0, ("reduced_precision",)), ("ok", 4.0, ("exception_fallback", "uses_custom_kernel")),
               ("ok", 1.2, ("uses_custom_kernel", "timing_unstable")), ("incorrect", None, ())]
    for i, (status, sp, flags) in enumerate(rows_in):
        store.add(EvalResult(task="relu", status=status, speedup=sp, flags=flags, task_hash=relu.hash), relu,
                  Candidate(code(i + 10), "relu"), CFG)
    rows = build_prompt_rows(store, [relu], n=3, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=3)
    for row in rows:
        text = row["prompt"][0]["content"]
        assert "x * 12" in text and "x * 10" not in text and "x * 11" not in text
        assert row["exemplars"] == 1
