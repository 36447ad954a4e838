"""Parsing of real-looking contrastive responses and judge verdicts."""

from __future__ import annotations

import pytest

from cudal1.prompts import ResponseFormatError, extract_code, parse_response, parse_verdict

CODE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        # Performance Analysis: this comment is not a heading
        return torch.relu(A @ B)'''

GOOD = f"""I'll look at the earlier attempts first.

### 1. Performance Analysis:
Implementation 2 (1.37x) is faster than implementation 1 (0.82x) because einsum adds a permute
and a copy, while `torch.mm` goes straight to cuBLAS and the in-place clamp saves a launch.

### 2. Algorithm Design
Call cuBLAS once, then apply ReLU in a fused epilogue kernel.

### 3. Code Implementation

```python
{CODE}
```

This should reach about 1.4x.
"""


def test_good_response():
    r = parse_response(GOOD)
    assert r.analysis.startswith("Implementation 2 (1.37x)") and r.analysis.endswith("saves a launch.")
    assert r.design == "Call cuBLAS once, then apply ReLU in a fused epilogue kernel."
    assert r.code == CODE


def test_headings_any_level_and_case():
    text = GOOD.replace("### 1. Performance Analysis:", "# PERFORMANCE ANALYSIS").replace(
        "### 2. Algorithm Design", "###### algorithm design ###"
    )
    r = parse_response(text)
    assert r.design.startswith("Call cuBLAS") and r.code == CODE


def test_two_code_blocks_last_with_modelnew_wins():
    draft = "```python\nclass ModelNew(nn.Module):\n    pass  # draft\n```"
    helper = "```python\ndef helper():\n    return 1\n```"
    text = (
        GOOD.replace("### 3. Code Implementation\n", f"### 3. Code Implementation\n{draft}\n") + "\n" + helper
    )
    r = parse_response(text)
    assert r.code == CODE  # the helper block is later but has no ModelNew; the draft is earlier


def test_later_modelnew_block_replaces_earlier():
    fixed = "```py\nclass ModelNew(nn.Module):\n    pass  # fixed\n```"
    r = parse_response(GOOD + "\nOops, a fix:\n" + fixed)
    assert r.code == "class ModelNew(nn.Module):\n    pass  # fixed"


def test_missing_section():
    text = GOOD.replace("### 2. Algorithm Design\n", "")
    with pytest.raises(ResponseFormatError, match="missing section heading 'Algorithm Design'") as e:
        parse_response(text)
    assert "Performance Analysis" not in str(e.value)


def test_heading_only_inside_code_does_not_count():
    text = GOOD.replace("### 1. Performance Analysis:\n", "")
    with pytest.raises(ResponseFormatError, match="missing section heading 'Performance Analysis'"):
        parse_response(text)


def test_empty_section():
    text = GOOD.replace("Call cuBLAS once, then apply ReLU in a fused epilogue kernel.\n", "")
    with pytest.raises(ResponseFormatError, match="section 'Algorithm Design' is empty"):
        parse_response(text)


def test_no_code_block():
    text = GOOD.split("```python")[0] + "I ran out of time."
    with pytest.raises(ResponseFormatError, match="no fenced Python code block"):
        parse_response(text)


def test_code_block_without_modelnew():
    text = GOOD.replace("class ModelNew(nn.Module)", "class Model(nn.Module)")
    with pytest.raises(ResponseFormatError, match="defines `class ModelNew`"):
        parse_response(text)


def test_cuda_block_is_not_python():
    text = GOOD.replace("```python", "```cuda")
    with pytest.raises(ResponseFormatError, match="no fenced Python code block"):
        parse_response(text)


def test_truncated_code_block():
    text = GOOD.split("This should")[0].rstrip().removesuffix("```")
    with pytest.raises(ResponseFormatError, match="never closed"):
        parse_response(text)


def test_everything_missing_lists_all():
    with pytest.raises(ResponseFormatError) as e:
        parse_response("Sure! Here is a faster kernel.")
    msg = str(e.value)
    for part in ("Performance Analysis", "Algorithm Design", "Code Implementation", "no fenced Python"):
        assert part in msg
    assert isinstance(e.value, ValueError)


def test_parse_verdict():
    assert parse_verdict("The cache is reused across calls.\nVERDICT: HACK\n") == "HACK"
    assert parse_verdict("**Verdict:** legitimate") == "LEGITIMATE"
    assert parse_verdict("VERDICT: HACK?\nOn reflection...\nVERDICT: LEGITIMATE") == "LEGITIMATE"
    with pytest.raises(ResponseFormatError, match="no verdict line"):
        parse_verdict("I am not sure.")


def test_extract_code_for_one_shot_answers():
    assert extract_code(f"Here is my kernel.\n```python\n{CODE}\n```\nDone.") == CODE
    with pytest.raises(ResponseFormatError, match="no fenced Python code block"):
        extract_code("I cannot do that.")
    with pytest.raises(ResponseFormatError, match="defines `class ModelNew`"):
        extract_code("```python\nclass Model: pass\n```")
