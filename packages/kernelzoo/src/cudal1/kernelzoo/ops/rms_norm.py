"""RMS norm over the last dimension: ``y = x / sqrt(mean(x^2) + eps) * weight``.

Shapes: ``x`` (..., N), ``weight`` (N,); float32 (statistics in fp32); output like ``x``. One program per
row: a sum-of-squares pass and a write pass (two reads, one write).
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
check_table(CONFIGS, "rms_norm")


def rms_norm_ref(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch reference (written out, as the built-in task does)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm_launch(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) with ``weight`` (N,)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,):
        raise ValueError(f"weight must have shape ({n_cols},), got {tuple(weight.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel():
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _rms_norm_kernel[(xc.numel() // n_cols,)](xc, weight.contiguous(), y, n_cols, eps, BLOCK=block,
                                                 num_warps=cfg["num_warps"])
    return y


@torch.library.custom_op("cudal1::rms_norm", mutates_args=())
def _rms_norm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return rms_norm_launch(x, weight, eps) if x.is_cuda else rms_norm_ref(x, weight, eps)


@_rms_norm_op.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMS norm of ``x`` (..., N) with ``weight`` (N,) (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.rms_norm``."""
    return torch.ops.cudal1.rms_norm(x, weight, eps)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_rms_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"})]
