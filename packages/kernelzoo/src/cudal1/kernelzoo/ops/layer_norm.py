"""Layer norm over the last dimension with affine weight and bias:
``y = (x - mean) / sqrt(var + eps) * weight + bias`` (biased variance, as torch).

Shapes: ``x`` (..., N), ``weight`` and ``bias`` (N,); float32 (statistics in fp32); output like ``x``.
One program per row: a mean pass, a variance pass (no cancellation from E[x^2] - E[x]^2), a write pass.
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
check_table(CONFIGS, "layer_norm")


def layer_norm_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, 0) / n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32) - mean
        acc += tl.where(mask, d * d, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm_launch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                      config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) with ``weight``, ``bias`` (N,)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,) or bias.shape != (n_cols,):
        raise ValueError(f"weight and bias must have shape ({n_cols},), got {tuple(weight.shape)} and {tuple(bias.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel():
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _layer_norm_kernel[(xc.numel() // n_cols,)](xc, weight.contiguous(), bias.contiguous(), y, n_cols, eps,
                                                   BLOCK=block, num_warps=cfg["num_warps"])
    return y


@torch.library.custom_op("cudal1::layer_norm", mutates_args=())
def _layer_norm_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    return layer_norm_launch(x, weight, bias, eps) if x.is_cuda else layer_norm_ref(x, weight, bias, eps)


@_layer_norm_op.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Layer norm of ``x`` (..., N) with ``weight``, ``bias`` (N,) (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.layer_norm``."""
    return torch.ops.cudal1.layer_norm(x, weight, bias, eps)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_layer_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"})]
