"""The LLM training ops' Triton kernels against their references, per dtype (Triton's interpreter on a CPU-only
machine, the GPU where there is one); gradients are in test_gradients.py."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import add_rms_norm
from cudal1.kernelzoo.ops import add_rms_norm as arn

DEV = "cuda" if torch.cuda.is_available() else "cpu"
#: (atol, rtol) per dtype: the kernels compute in fp32 and round once at the store
TOL = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def rnd(shape, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 2).to(dtype).to(DEV)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("shape, block", [((3, 40), 16), ((2, 3, 33), 64), ((1, 1), 16)])
def test_add_rms_norm_kernel(dtype, shape, block):
    x, res, w = rnd(shape, 1, dtype), rnd(shape, 2, dtype), rnd(shape[-1:], 3, dtype)
    y, h = arn.add_rms_norm_launch(x, res, w, 1e-6, {"BLOCK": block, "num_warps": 4})
    y_ref, h_ref = arn.add_rms_norm_ref(x, res, w, 1e-6)
    assert y.dtype == h.dtype == dtype
    # the residual stream is x + residual rounded once (Triton's CPU interpreter rounds bf16 its own way: one ulp)
    ulp = 2.0 ** -7 if dtype == torch.bfloat16 and DEV == "cpu" else 0.0
    torch.testing.assert_close(h, h_ref, rtol=ulp, atol=0)
    atol, rtol = TOL[dtype]
    torch.testing.assert_close(y.float(), y_ref.float(), atol=atol, rtol=rtol)


def test_add_rms_norm_checks_its_inputs():
    x = torch.randn(2, 8)
    with pytest.raises(ValueError, match="residual must match x"):
        add_rms_norm(x, torch.randn(2, 7), torch.ones(8))
    with pytest.raises(ValueError, match="residual must match x"):
        add_rms_norm(x, torch.randn(2, 8, dtype=torch.float64), torch.ones(8))
    with pytest.raises(ValueError, match=r"weight must have shape \(8,\)"):
        add_rms_norm(x, x, torch.ones(4))
