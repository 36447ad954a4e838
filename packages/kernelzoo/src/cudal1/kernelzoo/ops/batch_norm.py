"""Batch norm in inference mode (running statistics):
``y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]``, computed as
``y = (x - running_mean[c]) * scale[c] + bias[c]`` with ``scale = weight / sqrt(running_var + eps)`` derived
inside the kernel from the buffers as they are at each call (nothing cached). As ``F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)``.

Shapes: ``x`` (N, C, *spatial) float32, contiguous NCHW (a non-contiguous input is copied first);
``running_mean``, ``running_var``, ``weight``, ``bias`` (C,); output like ``x``. Grid (N * C, cdiv(spatial,
BLOCK)): one read and one write per element, memory-bound.

Backward (``batch_norm_backward_launch``, CUDA, fp32/bf16/fp16; the running statistics take no gradient, as in
PyTorch): one kernel, grid (N * C, SPLIT), reads ``x`` and ``dy`` once and writes ``dx = dy * scale[c]`` with
each plane chunk's sums of ``dy`` and ``dy * xhat`` (``xhat = (x - running_mean) / sqrt(running_var + eps)``,
fp32); ``dbias`` and ``dweight`` are their sums over the batch and the chunks. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "batch_norm", "batch_norm_backward_launch", "batch_norm_launch", "batch_norm_ref"]

#: BLOCK: elements per tile, num_warps; CHUNK: target elements of a plane per backward program (a plane is split
#: in at most MAX_SPLIT chunks)
CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8, "CHUNK": 32768},
    "sm86": {"BLOCK": 2048, "num_warps": 8, "CHUNK": 16384},
    "sm89": {"BLOCK": 2048, "num_warps": 8, "CHUNK": 16384},
    "sm90": {"BLOCK": 8192, "num_warps": 16, "CHUNK": 32768},
}
check_table(CONFIGS, "batch_norm")
MAX_SPLIT = 64


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


@triton.jit
def _batch_norm_bwd_kernel(x_ptr, rm_ptr, rv_ptr, w_ptr, dy_ptr, dx_ptr, sums_ptr, n_planes, n_channels, spatial,
                           plane_chunk, eps, STORE_DX: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    part = tl.program_id(1)
    c = plane % n_channels
    rstd = 1.0 / tl.sqrt_rn(tl.load(rv_ptr + c).to(tl.float32) + eps)
    scale = tl.load(w_ptr + c).to(tl.float32) * rstd
    mean = tl.load(rm_ptr + c).to(tl.float32)
    acc_b = tl.zeros([BLOCK], tl.float32)
    acc_w = tl.zeros([BLOCK], tl.float32)
    hi = tl.minimum((part + 1) * plane_chunk, spatial)
    for start in range(part * plane_chunk, hi, BLOCK):
        offs = plane * spatial + start + tl.arange(0, BLOCK)
        mask = start + tl.arange(0, BLOCK) < hi
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        if STORE_DX:
            tl.store(dx_ptr + offs, (dy * scale).to(dx_ptr.dtype.element_ty), mask=mask)
        acc_b += dy
        acc_w += dy * (x - mean) * rstd  # 0 off the plane (dy = 0 there)
    nsp = tl.num_programs(1)  # sums: (2, planes, splits), dy then dy * xhat
    tl.store(sums_ptr + plane * nsp + part, tl.sum(acc_b, 0))
    tl.store(sums_ptr + (n_planes + plane) * nsp + part, tl.sum(acc_w, 0))


def batch_norm_backward_launch(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                               weight: torch.Tensor, dy: torch.Tensor, eps: float = 1e-5, *, dx: bool = True,
                               config: dict | None = None) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """``(dx, dweight, dbias)`` of :func:`batch_norm_ref` at ``x`` (N, C, *) for the output gradient ``dy``
    (``x``'s shape): ``dx`` contiguous in ``x``'s dtype (None with ``dx=False``), ``dweight``, ``dbias`` in
    ``weight``'s dtype (summed in fp32)."""
    _check(x, running_mean, running_var, weight)
    if dy.shape != x.shape:
        raise ValueError(f"dy must have x's shape {tuple(x.shape)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc, dyc = x.contiguous(), dy.contiguous()
    gx = torch.empty_like(xc) if dx else None
    n, c = x.shape[:2]
    spatial = xc[0, 0].numel() if xc.numel() else 0
    block = max(16, min(cfg["BLOCK"], triton.next_power_of_2(max(spatial, 1))))
    splits = max(1, min(MAX_SPLIT, triton.cdiv(spatial, cfg["CHUNK"])))
    plane_chunk = triton.cdiv(triton.cdiv(spatial, splits), block) * block
    splits = max(1, triton.cdiv(spatial, plane_chunk)) if spatial else 1
    sums = torch.zeros((2, n, c, splits), dtype=torch.float32, device=x.device)
    if xc.numel():
        _batch_norm_bwd_kernel[(n * c, splits)](xc, running_mean.contiguous(), running_var.contiguous(),
                                                weight.contiguous(), dyc, gx if dx else xc, sums, n * c, c, spatial,
                                                plane_chunk, eps, STORE_DX=dx, BLOCK=block,
                                                num_warps=cfg["num_warps"])
    sums = sums.sum((1, 3))  # (2, C): sum dy, sum dy * xhat
    return gx, sums[1].to(weight.dtype), sums[0].to(weight.dtype)


def _batch_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None (also when a running
    statistic wants a gradient: the reference then raises PyTorch's error)."""
    (x, running_mean, running_var, weight, bias, eps), (dy,) = args, grads
    if dy is None or needs[1] or needs[2] or not on_kernels(x, dy, running_mean, running_var, weight, bias):
        return None
    gx, dw, db = batch_norm_backward_launch(x, running_mean, running_var, weight, dy, eps, dx=needs[0])
    return gx, None, None, dw if needs[3] else None, db.to(bias.dtype) if needs[4] else None, None


@zoo_custom_op("cudal1::batch_norm", mutates_args=(), ref=batch_norm_ref, fast_backward=_batch_norm_backward)
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
TRITON_KERNELS = [
    TritonKernel("_batch_norm_kernel", {
        "x_ptr": "*fp32", "rm_ptr": "*fp32", "rv_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32",
        "n_channels": "i32", "spatial": "i32", "eps": "fp32"}),
    TritonKernel("_batch_norm_bwd_kernel", {
        "x_ptr": "*bf16", "rm_ptr": "*fp32", "rv_ptr": "*fp32", "w_ptr": "*bf16", "dy_ptr": "*bf16",
        "dx_ptr": "*bf16", "sums_ptr": "*fp32", "n_planes": "i32", "n_channels": "i32", "spatial": "i32",
        "plane_chunk": "i32", "eps": "fp32"}, constexprs={"STORE_DX": True}),
]
