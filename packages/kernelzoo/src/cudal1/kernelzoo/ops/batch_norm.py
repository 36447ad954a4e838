"""Batch norm in inference mode (running statistics):
``y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]``, computed as
``y = (x - running_mean[c]) * scale[c] + bias[c]`` with ``scale = weight / sqrt(running_var + eps)`` derived
inside the kernel from the buffers as they are at each call (nothing cached). As ``F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)``.

Shapes: ``x`` (N, C, *spatial) float32, contiguous NCHW (a non-contiguous input is copied first);
``running_mean``, ``running_var``, ``weight``, ``bias`` (C,); output like ``x``. Grid (N * C, cdiv(spatial,
BLOCK)): one read and one write per element, memory-bound.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op

__all__ = ["CONFIGS", "batch_norm", "batch_norm_launch", "batch_norm_ref"]

CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 8192, "num_warps": 16},
}
check_table(CONFIGS, "batch_norm")


def batch_norm_ref(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor, weight: torch.Tensor,
                   bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """PyTorch reference (inference mode)."""
    return torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)


@triton.jit
def _batch_norm_kernel(x_ptr, rm_ptr, rv_ptr, w_ptr, b_ptr, y_ptr, n_channels, spatial, eps, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    c = plane % n_channels
    scale = tl.load(w_ptr + c).to(tl.float32) / tl.sqrt_rn(tl.load(rv_ptr + c).to(tl.float32) + eps)
    mean = tl.load(rm_ptr + c).to(tl.float32)
    shift = tl.load(b_ptr + c).to(tl.float32)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < spatial
    x = tl.load(x_ptr + plane * spatial + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    y = (x.to(tl.float32) - mean) * scale + shift  # subtract first: no cancellation when |mean| >> std
    tl.store(y_ptr + plane * spatial + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, *per_channel: torch.Tensor) -> None:
    if x.dim() < 2 or not x.dtype.is_floating_point:
        raise ValueError(f"batch_norm: x must be a floating (N, C, *) tensor, got {x.dtype} {tuple(x.shape)}")
    c = x.shape[1]
    if any(t.shape != (c,) for t in per_channel):
        raise ValueError(f"batch_norm: running_mean, running_var, weight, bias must have shape ({c},), got "
                         f"{[tuple(t.shape) for t in per_channel]}")


def batch_norm_launch(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                      weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                      config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (N, C, *) with per-channel ``running_mean``, ``running_var``,
    ``weight``, ``bias`` (C,)."""
    _check(x, running_mean, running_var, weight, bias)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel() == 0:
        return y
    n, c = xc.shape[:2]
    spatial = xc[0, 0].numel()
    block = max(16, min(cfg["BLOCK"], triton.next_power_of_2(spatial)))
    grid = (n * c, triton.cdiv(spatial, block))
    if grid[1] > 65535:
        raise ValueError(f"batch_norm: spatial size {spatial} too large for BLOCK {block} (grid axis 1 > 65535)")
    _batch_norm_kernel[grid](xc, running_mean.contiguous(), running_var.contiguous(), weight.contiguous(),
                             bias.contiguous(), y, c, spatial, eps, BLOCK=block, num_warps=cfg["num_warps"])
    return y


@zoo_custom_op("cudal1::batch_norm", mutates_args=(), ref=batch_norm_ref)
def _batch_norm_op(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor, weight: torch.Tensor,
                   bias: torch.Tensor, eps: float) -> torch.Tensor:
    if x.is_cuda:
        return batch_norm_launch(x, running_mean, running_var, weight, bias, eps)
    return batch_norm_ref(x, running_mean, running_var, weight, bias, eps)


@_batch_norm_op.register_fake
def _(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor, weight: torch.Tensor,
      bias: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def batch_norm(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor, weight: torch.Tensor,
               bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Inference-mode batch norm of ``x`` (N, C, *) with per-channel running statistics and affine ``weight``,
    ``bias`` (C,) (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.batch_norm``."""
    _check(x, running_mean, running_var, weight, bias)
    return call("batch_norm", x, running_mean, running_var, weight, bias, float(eps))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_batch_norm_kernel", {
    "x_ptr": "*fp32", "rm_ptr": "*fp32", "rv_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32",
    "n_channels": "i32", "spatial": "i32", "eps": "fp32"})]
