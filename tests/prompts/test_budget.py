"""Token-budget fitting with a whitespace-word counter standing in for a tokenizer."""

from __future__ import annotations

import pytest

from cudal1.prompts import Exemplar, PromptBudgetError, fit_to_budget, render_contrastive, trim_order

TASK = "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"


def words(text: str) -> int:
    return len(text.split())


def ex(tag: str, score: float | None, length: int = 20) -> Exemplar:
    return Exemplar(
        code=f"class ModelNew:  # {tag}\n" + f"    y_{tag} = 1\n" * length,
        score=score,
        status="ok" if score is not None else "incorrect",
    )


EXS = [ex("a", 1.5), ex("b", 0.7), ex("c", 2.4), ex("d", None)]


def shown(prompt: str) -> set[str]:
    return {e.code.split("# ")[1].split("\n")[0] for e in EXS if e.code.strip() in prompt}


def test_everything_fits():
    full = render_contrastive(TASK, EXS)
    assert fit_to_budget(TASK, EXS, words, words(full)) == full


def test_drops_lowest_score_first_keeps_order():
    full = words(render_contrastive(TASK, EXS))
    p = fit_to_budget(TASK, EXS, words, full - 1)
    assert shown(p) == {"a", "b", "c"}  # the unscored one goes first
    p = fit_to_budget(TASK, EXS, words, words(render_contrastive(TASK, [EXS[0], EXS[2]])))
    assert shown(p) == {"a", "c"}
    assert p.index("# a") < p.index("# c")  # original order kept
    p = fit_to_budget(TASK, EXS, words, words(render_contrastive(TASK, [EXS[2]])))
    assert shown(p) == {"c"}


def test_task_alone():
    alone = render_contrastive(TASK, [])
    assert fit_to_budget(TASK, EXS, words, words(alone)) == alone
    assert TASK.strip() in alone


def test_task_alone_too_big():
    budget = words(render_contrastive(TASK, [])) - 1
    with pytest.raises(PromptBudgetError, match=f"max_tokens={budget}"):
        fit_to_budget(TASK, EXS, words, budget)
    with pytest.raises(ValueError, match="max_tokens must be"):
        fit_to_budget(TASK, EXS, words, 0)


def test_result_never_exceeds_budget():
    alone = words(render_contrastive(TASK, []))
    full = words(render_contrastive(TASK, EXS))
    for budget in range(alone, full + 5):
        p = fit_to_budget(TASK, EXS, words, budget)
        assert words(p) <= budget and TASK.strip() in p


def test_trim_order_ties_longest_first():
    exs = [ex("short", 1.0, length=2), ex("long", 1.0, length=30), ex("best", 3.0)]
    assert trim_order(exs) == [1, 0, 2]
