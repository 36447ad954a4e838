"""Softmax over the last dimension: ``y[..., j] = exp(x[..., j] - max) / sum_k exp(x[..., k] - max)``.

Shapes: ``x`` (..., N), any N; float32 (fp16/bf16 computed in fp32); output like ``x``. One program per
row; an online max/sum pass over the row, then a normalising pass (two reads, one write).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..arch import check_table, pick
from ..kernel_specs import TritonKernel

CONFIGS = {
    "sm80": {"BLOCK": 1024, "num_warps": 4},
    "sm86": {"BLOCK": 1024, "num_warps": 4},
    "sm89": {"BLOCK": 1024, "num_warps": 4},
    "sm90": {"BLOCK": 2048, "num_warps": 8},
}
check_table(CONFIGS, "softmax")


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.softmax(x, dim=-1)


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen only -inf keep s = 0 (avoid inf - inf)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, 0)
    row_sum = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), 0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N)."""
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n_cols = xc.shape[-1] if xc.dim() else 1
    rows = xc.numel() // max(n_cols, 1)
    if xc.numel():
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _softmax_kernel[(rows,)](xc, y, n_cols, BLOCK=block, num_warps=cfg["num_warps"])
    return y


@torch.library.custom_op("cudal1::softmax", mutates_args=())
def _softmax_op(x: torch.Tensor) -> torch.Tensor:
    return softmax_launch(x) if x.is_cuda else softmax_ref(x)


@_softmax_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of ``x`` over its last dimension (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.softmax``."""
    return torch.ops.cudal1.softmax(x)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_softmax_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32"})]
