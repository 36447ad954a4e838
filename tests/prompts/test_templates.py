"""Golden-file tests for the rendered prompt templates.

To regenerate the golden files after an intended template change, run

    CUDAL1_REGEN_GOLDEN=1 uv run pytest tests/prompts/test_templates.py

then review the diff of tests/prompts/golden/*.txt before committing it.
"""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

import cudal1.prompts as prompts_pkg
from cudal1.prompts import budget, parsing, sampling, templates
from cudal1.prompts.templates import (
    SECTIONS,
    Exemplar,
    JudgeCase,
    fence,
    render_contrastive,
    render_judge,
    render_one_shot,
)

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("CUDAL1_REGEN_GOLDEN") == "1"

TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """C = relu(A @ B) for square fp32 matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.relu(A @ B)


N = 1024


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
'''

FAST = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A, B):
        out = torch.mm(A, B)
        return out.clamp_min_(0)
"""

SLOW = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A, B):
        # cost: $2 per call (a dollar sign must survive templating)
        return torch.relu(torch.einsum("ik,kj->ij", A, B))
"""

HACK = """import torch.nn as nn


class ModelNew(nn.Module):
    _cache = None

    def forward(self, A, B):
        if ModelNew._cache is None:
            ModelNew._cache = (A @ B).relu()
        return ModelNew._cache
"""


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.write_text(text)
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: run with CUDAL1_REGEN_GOLDEN=1 to create it")
    expected = path.read_text()
    assert text == expected, f"{name} differs from its golden file; if intended, regenerate (see module doc)"


def test_one_shot_golden():
    check_golden("one_shot.txt", render_one_shot(TASK))


def test_contrastive_golden():
    exemplars = [
        Exemplar(code=SLOW, score=0.82, status="ok"),
        Exemplar(code=FAST, score=1.37, status="ok", speedup=1.37),
        Exemplar(code="class ModelNew:\n    pass\n", score=None, status="compile_error"),
    ]
    check_golden("contrastive.txt", render_contrastive(TASK, exemplars))


def test_contrastive_no_exemplars_golden():
    check_golden("contrastive_empty.txt", render_contrastive(TASK, []))


def test_judge_golden():
    cases = [
        JudgeCase(code=HACK, verdict="HACK", reason="returns a cached output on later calls"),
        JudgeCase(code=FAST, verdict="LEGITIMATE"),
    ]
    check_golden("judge.txt", render_judge(HACK, TASK, cases))


def test_judge_no_cases_golden():
    check_golden("judge_empty.txt", render_judge(FAST, TASK, []))


def test_contrastive_contains_rules_and_sections():
    p = render_contrastive(TASK, [Exemplar(code=FAST, score=1.37)])
    for section in SECTIONS:
        assert f"## {section}" in p
    for phrase in (
        "cache or reuse results",
        "sizes, shapes or hyperparameters",
        "side streams or threads",
        "fp16, bf16 or TF32",
        "must compile and run",
        "floating-point",
    ):
        assert phrase in p, phrase
    assert TASK.strip() in p and FAST.strip() in p


def test_code_with_dollar_and_backticks_survives():
    code = 'class ModelNew:\n    doc = """```python\nx = $y\n```"""\n'
    p = render_contrastive(TASK, [Exemplar(code=code, score=1.0)])
    assert code.strip() in p
    assert "````python" in p  # the fence is longer than the backtick run inside the code
    assert fence("a") == "```python\na\n```"


def test_non_finite_score_rejected():
    with pytest.raises(ValueError, match="non-finite"):
        render_contrastive(TASK, [Exemplar(code=FAST, score=float("nan"))])


@pytest.mark.parametrize("module", [prompts_pkg, templates, sampling, parsing, budget])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
