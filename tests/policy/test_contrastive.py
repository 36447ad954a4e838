"""Contrastive prompts rebuilt from the results store."""

from __future__ import annotations

import random

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore
from cudal1.policy.contrastive import build_prompt_rows, exemplars_from_store, worth_showing
from cudal1.policy.tasks import select_tasks

CFG = EvalConfig()


def R(task: str, status: str, speedup: float | None, task_hash: str, flags: tuple[str, ...] = ()) -> EvalResult:
    """A stored result; an ok one with a +-1% interval (its speedup counts)."""
    ci = (0.99 * speedup, 1.01 * speedup) if speedup is not None else None
    return EvalResult(task=task, status=status, speedup=speedup, speedup_ci=ci, flags=flags, task_hash=task_hash)


def code(i: int) -> str:
    return f"import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * {i}\n"


def test_exemplars_come_from_this_tasks_results(tmp_path):
    relu, softmax = select_tasks("builtin", ["relu", "softmax"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    full_relu = select_tasks("builtin", ["relu"])[0]
    for i, (status, sp) in enumerate([("ok", 1.5), ("incorrect", None), ("ok", 3.0)]):
        store.add(R("relu", status, sp, relu.hash), relu,
                  Candidate(code(i), "relu"), CFG)
    # the same source measured again: only its newest measurement counts
    store.add(R("relu", "ok", 1.7, relu.hash), relu, Candidate(code(0), "relu"), CFG)
    # the full-size relu (another task hash) and another task: not exemplars of the resized relu
    store.add(R("relu", "ok", 9.0, full_relu.hash), full_relu,
              Candidate(code(9), "relu"), CFG)
    store.add(R("softmax", "ok", 2.0, softmax.hash), softmax,
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
        store.add(R("relu", "ok", 1.0 + i, relu.hash), relu,
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
        store.add(R("relu", status, sp, relu.hash, flags), relu,
                  Candidate(code(i + 10), "relu"), CFG)
    rows = build_prompt_rows(store, [relu], n=3, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=3)
    for row in rows:
        text = row["prompt"][0]["content"]
        assert "x * 12" in text and "x * 10" not in text and "x * 11" not in text
        assert row["exemplars"] == 1


def test_copies_are_not_shown_and_an_improvement_is_in_every_prompt_once_it_exists(tmp_path):
    (relu,) = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    store.add(R("relu", "ok", 1.0, relu.hash, ("same_as_reference",)), relu, Candidate(code(20), "relu"), CFG)
    noisy = EvalResult(task="relu", status="ok", speedup=1.04, speedup_ci=(0.97, 1.1), task_hash=relu.hash)
    store.add(noisy, relu, Candidate(code(21), "relu"), CFG)
    for i in range(6):  # many slow rewrites: a draw of one exemplar would mostly show one of them
        store.add(R("relu", "ok", 0.5 + 0.05 * i, relu.hash), relu, Candidate(code(30 + i), "relu"), CFG)
    ex = {e.code: e.score for e in exemplars_from_store(store, relu, worth_showing)}
    assert code(20) not in ex  # the reference handed back is no exemplar
    assert ex[code(21)] == 1.0  # a 1.04x whose interval reaches below 1 is shown at parity
    rows = build_prompt_rows(store, [relu], n=1, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=8)
    assert not any("x * 22" in r["prompt"][0]["content"] for r in rows)
    store.add(R("relu", "ok", 1.3, relu.hash), relu, Candidate(code(22), "relu"), CFG)
    rows = build_prompt_rows(store, [relu], n=1, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=8)
    assert all("x * 22" in r["prompt"][0]["content"] for r in rows)


def test_each_row_names_the_verified_answers_its_prompt_shows(tmp_path):
    """The reward reads the ``shown`` column to tell a handed-back exemplar from the policy's own answer: it holds
    the identity of every verified exemplar the prompt shows and nothing else (no failure, nothing not shown)."""
    from cudal1.harness.novelty import source_identity

    (relu,) = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    for i, (status, sp) in enumerate([("ok", 1.5), ("incorrect", None), ("ok", 3.0), ("ok", 2.0)]):
        store.add(R("relu", status, sp, relu.hash), relu, Candidate(code(i), "relu"), CFG)
    rows = build_prompt_rows(store, [relu], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=3)
    for row in rows:
        text = row["prompt"][0]["content"]
        shown = {i for i in range(4) if f"x * {i}\n" in text}
        assert set(row["shown"]) == {source_identity(code(i)) for i in shown if i != 1}
        assert source_identity(code(1)) not in row["shown"]  # the failure: shown, never a verified answer
    # before any answer, the one exemplar is the reference rewritten as ModelNew (score 1.00)
    (fresh,) = build_prompt_rows(ResultStore(tmp_path / "e.sqlite"), [relu], n=2, tau=1.0, bucket_width=0.25,
                                 rng=random.Random(0), count_tokens=len, max_tokens=100_000)
    assert len(fresh["shown"]) == 1


def test_each_row_carries_the_behaviours_of_the_verified_answers_it_shows_with_their_speedups(tmp_path):
    """The reward reads ``shown_behaviour`` and ``shown_speedup`` to find a copy in disguise: the behaviour the harness
    kept for each verified exemplar the prompt shows (``integrity["behaviour"]``) and the speedup it was shown with, in
    the same order; nothing for a failure, for an answer stored without a behaviour, or for one not shown."""
    (relu,) = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    results = [("ok", 1.5, "B0"), ("incorrect", None, "B1"), ("ok", 3.0, "B2"), ("ok", 2.0, None)]
    for i, (status, sp, behaviour) in enumerate(results):
        r = R("relu", status, sp, relu.hash)
        if behaviour is not None:
            r = EvalResult(**{**r.__dict__, "integrity": {"behaviour": behaviour}})
        store.add(r, relu, Candidate(code(i), "relu"), CFG)
    rows = build_prompt_rows(store, [relu], n=3, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=3)
    for row in rows:
        text = row["prompt"][0]["content"]
        expected = [(f"B{i}", results[i][1]) for i in (0, 2) if f"x * {i}\n" in text]
        assert sorted(zip(row["shown_behaviour"], row["shown_speedup"], strict=True)) == sorted(expected)
    assert any(row["shown_behaviour"] for row in rows)
    (fresh,) = build_prompt_rows(ResultStore(tmp_path / "e.sqlite"), [relu], n=2, tau=1.0, bucket_width=0.25,
                                 rng=random.Random(0), count_tokens=len, max_tokens=100_000)
    assert fresh["shown_behaviour"] == [] and fresh["shown_speedup"] == []  # the reference: the harness's own flag


def test_exemplars_from_reference_shows_the_reference_alone_whatever_the_store_holds(tmp_path):
    """``grpo.exemplars_from: reference`` (issue 42, attempt 6): no GRPO or self-training prompt shows an earlier
    answer of its task, so none can be handed back and an answer written again from the weights is paid again; the
    prompt is the held-out evaluation's, word for word. The twin, ``store``, shows the task's improvement."""
    from cudal1.policy.contrastive import row_filter
    from cudal1.policy.evaluation import evaluation_prompt
    from cudal1.policy.seed_data import reference_as_modelnew

    (relu,) = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    store = ResultStore(tmp_path / "r.sqlite")
    for i, (status, sp) in enumerate([("ok", 1.5), ("incorrect", None), ("ok", 3.0)]):
        store.add(R("relu", status, sp, relu.hash), relu, Candidate(code(i), "relu"), CFG)

    def rows(exemplars_from: str) -> list[dict]:
        return build_prompt_rows(store, [relu], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                                 count_tokens=lambda s: len(s.split()), max_tokens=100_000, per_task=4,
                                 menu="MENU", keep=row_filter(exemplars_from))

    for row in rows("reference"):
        assert row["prompt"] == evaluation_prompt(relu, "MENU")
        assert not any(f"x * {i}\n" in row["prompt"][0]["content"] for i in range(3))
        assert row["exemplars"] == 1 and row["shown_speedup"] == []
        from cudal1.harness.novelty import source_identity

        assert row["shown"] == [source_identity(reference_as_modelnew(relu.source))]
    assert all("x * 2\n" in row["prompt"][0]["content"] for row in rows("store"))  # the twin: the 3.0x is shown


def test_an_unknown_exemplar_source_is_refused_by_name():
    import pytest

    from cudal1.policy.contrastive import row_filter, show_no_row
    from cudal1.policy.recipe import Recipe

    assert row_filter("store") is worth_showing and row_filter("reference") is show_no_row
    with pytest.raises(ValueError, match="store .* or reference"):
        row_filter("references")
    assert Recipe.from_dict({}, ["grpo.exemplars_from=reference"]).grpo.exemplars_from == "reference"
