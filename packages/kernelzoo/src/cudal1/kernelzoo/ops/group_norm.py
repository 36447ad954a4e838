"""Group norm with per-channel affine: for each sample n and group g of ``C / G`` channels,
``y = (x - mean) / sqrt(var + eps) * weight[c] + bias[c]`` (biased variance over the group's
``C / G * spatial`` elements), as ``F.group_norm(x, G, weight, bias, eps)``.

Shapes: ``x`` (N, C, *spatial) float32, contiguous NCHW (a non-contiguous input is copied first); ``weight``,
``bias`` (C,); ``C`` divisible by ``groups``; output like ``x``. Statistics in fp32, two levels:
1. ``_group_norm_stats_kernel``, grid (N * G, SPLIT): each program reduces one contiguous chunk of a group
   (a group is contiguous in NCHW) to (mean, M2), combining BLOCK-sized tiles with Chan's parallel update
   (tile mean, then the tile's sum of squared deviations from it: no E[x^2] - E[x]^2 cancellation).
2. ``_group_norm_apply_kernel``, grid (N * C, cdiv(spatial, BLOCK)): each program merges its group's SPLIT
   partials (Chan again, vectorised), folds rstd and weight into one scale for its channel, and writes
   ``y = (x - mean) * scale + bias[c]``.
Traffic: x read twice, y written once (3 passes over 4 bytes/element, like eager's two kernels); the
partials are 2 * N * G * SPLIT floats.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op

__all__ = ["CONFIGS", "group_norm", "group_norm_launch", "group_norm_ref"]

#: BLOCK: elements per tile (both kernels); CHUNK: target elements per stats program (the group is split in
#: a power of two of chunks, at most MAX_SPLIT); num_warps for both kernels.
CONFIGS = {
    "sm80": {"BLOCK": 4096, "CHUNK": 32768, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "CHUNK": 16384, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "CHUNK": 16384, "num_warps": 8},
    "sm90": {"BLOCK": 4096, "CHUNK": 32768, "num_warps": 8},
}
check_table(CONFIGS, "group_norm")
MAX_SPLIT = 64


def group_norm_ref(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
                   ) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.group_norm(x, groups, weight, bias, eps)


@triton.jit
def _group_norm_stats_kernel(x_ptr, mean_ptr, m2_ptr, group_size, chunk, SPLIT: tl.constexpr,
                             BLOCK: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    base = g * group_size
    lo = part * chunk
    hi = tl.minimum(lo + chunk, group_size)
    n_a = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    mean_a = n_a
    m2_a = n_a
    for start in range(lo, hi, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < hi
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.sum(tl.where(mask, 1.0, 0.0), 0)
        mean_b = tl.sum(x, 0) / n_b
        d = tl.where(mask, x - mean_b, 0.0)
        m2_b = tl.sum(d * d, 0)
        n = n_a + n_b
        delta = mean_b - mean_a
        mean_a += delta * (n_b / n)
        m2_a += m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    tl.store(mean_ptr + g * SPLIT + part, mean_a)
    tl.store(m2_ptr + g * SPLIT + part, m2_a)


@triton.jit
def _group_norm_apply_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, y_ptr, n_channels, spatial, ch_per_group,
                             group_size, chunk, eps, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    c = plane % n_channels
    g = plane // ch_per_group  # n * G + c // (C / G)
    parts = tl.arange(0, SPLIT)
    cnt = tl.minimum(tl.maximum(group_size - parts * chunk, 0), chunk).to(tl.float32)
    mu = tl.load(mean_ptr + g * SPLIT + parts)
    m2 = tl.load(m2_ptr + g * SPLIT + parts)
    total = tl.sum(cnt, 0)
    mean = tl.sum(cnt * mu, 0) / total
    dev = mu - mean
    var = tl.sum(m2 + cnt * dev * dev, 0) / total
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    scale = tl.load(w_ptr + c).to(tl.float32) * rstd
    shift = tl.load(b_ptr + c).to(tl.float32)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < spatial
    x = tl.load(x_ptr + plane * spatial + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    y = (x.to(tl.float32) - mean) * scale + shift  # subtract first: no cancellation when |mean| >> std
    tl.store(y_ptr + plane * spatial + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor) -> None:
    if x.dim() < 2 or not x.dtype.is_floating_point:
        raise ValueError(f"group_norm: x must be a floating (N, C, *) tensor, got {x.dtype} {tuple(x.shape)}")
    c = x.shape[1]
    if groups <= 0 or c % groups:
        raise ValueError(f"group_norm: channels ({c}) must be divisible by groups ({groups})")
    if weight.shape != (c,) or bias.shape != (c,):
        raise ValueError(f"group_norm: weight and bias must have shape ({c},), got {tuple(weight.shape)} and "
                         f"{tuple(bias.shape)}")


def group_norm_launch(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                      config: dict | None = None) -> torch.Tensor:
    """Run the two Triton kernels on ``x`` (N, C, *) with ``weight``, ``bias`` (C,)."""
    _check(x, groups, weight, bias)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n, c = xc.shape[:2]
    spatial = xc[0, 0].numel()
    group_size = c // groups * spatial
    if xc.numel() == 0:
        return y
    block = max(16, min(cfg["BLOCK"], triton.next_power_of_2(group_size)))
    split = min(MAX_SPLIT, triton.next_power_of_2(triton.cdiv(group_size, cfg["CHUNK"])))
    chunk = triton.cdiv(triton.cdiv(group_size, split), block) * block
    mean = torch.empty(n * groups * split, dtype=torch.float32, device=x.device)
    m2 = torch.empty_like(mean)
    _group_norm_stats_kernel[(n * groups, split)](xc, mean, m2, group_size, chunk, SPLIT=split, BLOCK=block,
                                                  num_warps=cfg["num_warps"])
    block_s = max(16, min(cfg["BLOCK"], triton.next_power_of_2(spatial)))
    if triton.cdiv(spatial, block_s) > 65535:
        raise ValueError(f"group_norm: spatial size {spatial} too large for BLOCK {block_s} (grid axis 1 > 65535)")
    _group_norm_apply_kernel[(n * c, triton.cdiv(spatial, block_s))](
        xc, weight.contiguous(), bias.contiguous(), mean, m2, y, c, spatial, c // groups, group_size, chunk, eps,
        SPLIT=split, BLOCK=block_s, num_warps=cfg["num_warps"])
    return y


@zoo_custom_op("cudal1::group_norm", mutates_args=(), ref=group_norm_ref)
def _group_norm_op(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float
                   ) -> torch.Tensor:
    if x.is_cuda:
        return group_norm_launch(x, groups, weight, bias, eps)
    return group_norm_ref(x, groups, weight, bias, eps)


@_group_norm_op.register_fake
def _(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def group_norm(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
               ) -> torch.Tensor:
    """Group norm of ``x`` (N, C, *) over ``groups`` groups with ``weight``, ``bias`` (C,) (Triton on CUDA,
    the reference on CPU); ``torch.ops.cudal1.group_norm``."""
    _check(x, groups, weight, bias)
    return call("group_norm", x, int(groups), weight, bias, float(eps))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_group_norm_stats_kernel", {"x_ptr": "*fp32", "mean_ptr": "*fp32", "m2_ptr": "*fp32",
                                              "group_size": "i32", "chunk": "i32"}, constexprs={"SPLIT": 16}),
    TritonKernel("_group_norm_apply_kernel", {
        "x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "mean_ptr": "*fp32", "m2_ptr": "*fp32",
        "y_ptr": "*fp32", "n_channels": "i32", "spatial": "i32", "ch_per_group": "i32", "group_size": "i32",
        "chunk": "i32", "eps": "fp32"}, constexprs={"SPLIT": 16}),
]
