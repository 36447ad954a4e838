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

Backward (``group_norm_backward_launch``, CUDA, fp32/bf16/fp16), statistics recomputed (the forward saves
nothing): the stats kernel above; ``_group_norm_bwd_reduce_kernel``, grid (N * C, SPLIT), sums ``dy`` and
``dy * xhat`` over each (sample, channel) plane's chunk (fp32 partials); from those (N, C) sums, ``dweight`` and
``dbias`` (sums over the batch) and the two group means of ``dxhat = dy * weight[c]`` (tiny PyTorch ops on (N, C));
``_group_norm_bwd_dx_kernel`` on the apply kernel's grid writes ``dx = rstd * (dxhat - mean(dxhat) - xhat *
mean(dxhat * xhat))``. Traffic: x read three times, dy twice, dx written once. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "group_norm", "group_norm_backward_launch", "group_norm_launch", "group_norm_ref"]

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
def _group_stats(mean_ptr, m2_ptr, g, group_size, chunk, eps, SPLIT: tl.constexpr):
    """(mean, rstd) of group ``g``, merged from its SPLIT (mean, M2) partials (Chan, vectorised)."""
    parts = tl.arange(0, SPLIT)
    cnt = tl.minimum(tl.maximum(group_size - parts * chunk, 0), chunk).to(tl.float32)
    mu = tl.load(mean_ptr + g * SPLIT + parts)
    m2 = tl.load(m2_ptr + g * SPLIT + parts)
    total = tl.sum(cnt, 0)
    mean = tl.sum(cnt * mu, 0) / total
    dev = mu - mean
    var = tl.sum(m2 + cnt * dev * dev, 0) / total
    return mean, 1.0 / tl.sqrt_rn(var + eps)


@triton.jit
def _group_norm_apply_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, y_ptr, n_channels, spatial, ch_per_group,
                             group_size, chunk, eps, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    c = plane % n_channels
    g = plane // ch_per_group  # n * G + c // (C / G)
    mean, rstd = _group_stats(mean_ptr, m2_ptr, g, group_size, chunk, eps, SPLIT)
    scale = tl.load(w_ptr + c).to(tl.float32) * rstd
    shift = tl.load(b_ptr + c).to(tl.float32)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < spatial
    x = tl.load(x_ptr + plane * spatial + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    y = (x.to(tl.float32) - mean) * scale + shift  # subtract first: no cancellation when |mean| >> std
    tl.store(y_ptr + plane * spatial + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, groups: int, *per_channel: torch.Tensor) -> None:
    if x.dim() < 2 or not x.dtype.is_floating_point:
        raise ValueError(f"group_norm: x must be a floating (N, C, *) tensor, got {x.dtype} {tuple(x.shape)}")
    c = x.shape[1]
    if groups <= 0 or c % groups:
        raise ValueError(f"group_norm: channels ({c}) must be divisible by groups ({groups})")
    if any(t.shape != (c,) for t in per_channel):
        raise ValueError(f"group_norm: weight and bias must have shape ({c},), got "
                         f"{[tuple(t.shape) for t in per_channel]}")


def _stats(xc: torch.Tensor, groups: int, cfg: dict) -> tuple[torch.Tensor, torch.Tensor, int, int, int]:
    """Run the stats kernel on contiguous non-empty ``xc``: (mean, M2 partials, SPLIT, chunk, spatial BLOCK of
    the per-plane kernels)."""
    n, c = xc.shape[:2]
    spatial = xc[0, 0].numel()
    group_size = c // groups * spatial
    block = max(16, min(cfg["BLOCK"], triton.next_power_of_2(group_size)))
    split = min(MAX_SPLIT, triton.next_power_of_2(triton.cdiv(group_size, cfg["CHUNK"])))
    chunk = triton.cdiv(triton.cdiv(group_size, split), block) * block
    mean = torch.empty(n * groups * split, dtype=torch.float32, device=xc.device)
    m2 = torch.empty_like(mean)
    _group_norm_stats_kernel[(n * groups, split)](xc, mean, m2, group_size, chunk, SPLIT=split, BLOCK=block,
                                                  num_warps=cfg["num_warps"])
    block_s = max(16, min(cfg["BLOCK"], triton.next_power_of_2(spatial)))
    if triton.cdiv(spatial, block_s) > 65535:
        raise ValueError(f"group_norm: spatial size {spatial} too large for BLOCK {block_s} (grid axis 1 > 65535)")
    return mean, m2, split, chunk, block_s


def group_norm_launch(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                      config: dict | None = None) -> torch.Tensor:
    """Run the two Triton kernels on ``x`` (N, C, *) with ``weight``, ``bias`` (C,)."""
    _check(x, groups, weight, bias)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel() == 0:
        return y
    n, c = xc.shape[:2]
    spatial = xc[0, 0].numel()
    mean, m2, split, chunk, block_s = _stats(xc, groups, cfg)
    _group_norm_apply_kernel[(n * c, triton.cdiv(spatial, block_s))](
        xc, weight.contiguous(), bias.contiguous(), mean, m2, y, c, spatial, c // groups, c // groups * spatial,
        chunk, eps, SPLIT=split, BLOCK=block_s, num_warps=cfg["num_warps"])
    return y


@triton.jit
def _group_norm_bwd_reduce_kernel(x_ptr, dy_ptr, mean_ptr, m2_ptr, sums_ptr, n_planes, spatial, ch_per_group,
                                  group_size, chunk, plane_chunk, eps, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    part = tl.program_id(1)
    mean, rstd = _group_stats(mean_ptr, m2_ptr, plane // ch_per_group, group_size, chunk, eps, SPLIT)
    acc_b = tl.zeros([BLOCK], tl.float32)
    acc_w = tl.zeros([BLOCK], tl.float32)
    hi = tl.minimum((part + 1) * plane_chunk, spatial)
    for start in range(part * plane_chunk, hi, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < hi
        x = tl.load(x_ptr + plane * spatial + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + plane * spatial + offs, mask=mask, other=0.0).to(tl.float32)
        acc_b += dy
        acc_w += dy * (x - mean) * rstd  # 0 off the plane (dy = 0 there)
    nsp = tl.num_programs(1)  # sums: (2, planes, splits), dy then dy * xhat
    tl.store(sums_ptr + plane * nsp + part, tl.sum(acc_b, 0))
    tl.store(sums_ptr + (n_planes + plane) * nsp + part, tl.sum(acc_w, 0))


@triton.jit
def _group_norm_bwd_dx_kernel(x_ptr, w_ptr, dy_ptr, mean_ptr, m2_ptr, coef_ptr, dx_ptr, n_groups, n_channels,
                              spatial, ch_per_group, group_size, chunk, eps, SPLIT: tl.constexpr,
                              BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    g = plane // ch_per_group
    mean, rstd = _group_stats(mean_ptr, m2_ptr, g, group_size, chunk, eps, SPLIT)
    w = tl.load(w_ptr + plane % n_channels).to(tl.float32)
    c_a = tl.load(coef_ptr + g)  # the group's mean of dxhat, then of dxhat * xhat
    c_b = tl.load(coef_ptr + n_groups + g)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < spatial
    x = tl.load(x_ptr + plane * spatial + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + plane * spatial + offs, mask=mask, other=0.0).to(tl.float32)
    dx = (w * dy - c_a - (x - mean) * rstd * c_b) * rstd
    tl.store(dx_ptr + plane * spatial + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def group_norm_backward_launch(x: torch.Tensor, groups: int, weight: torch.Tensor, dy: torch.Tensor,
                               eps: float = 1e-5, *, dx: bool = True, config: dict | None = None
                               ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """``(dx, dweight, dbias)`` of :func:`group_norm_ref` at ``x`` (N, C, *) with ``weight`` (C,) for the output
    gradient ``dy`` (``x``'s shape): ``dx`` contiguous in ``x``'s dtype (None with ``dx=False``), ``dweight``,
    ``dbias`` in ``weight``'s dtype (summed in fp32)."""
    _check(x, groups, weight)
    if dy.shape != x.shape:
        raise ValueError(f"dy must have x's shape {tuple(x.shape)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc, dyc = x.contiguous(), dy.contiguous()
    n, c = x.shape[:2]
    if xc.numel() == 0:
        zero = torch.zeros_like(weight)
        return (torch.empty_like(xc) if dx else None), zero, zero.clone()
    spatial = xc[0, 0].numel()
    cg = c // groups
    mean, m2, split, chunk, block_s = _stats(xc, groups, cfg)
    splits = min(MAX_SPLIT, triton.cdiv(spatial, cfg["CHUNK"]))
    plane_chunk = triton.cdiv(triton.cdiv(spatial, splits), block_s) * block_s
    splits = triton.cdiv(spatial, plane_chunk)
    sums = torch.empty((2, n, c, splits), dtype=torch.float32, device=x.device)
    _group_norm_bwd_reduce_kernel[(n * c, splits)](xc, dyc, mean, m2, sums, n * c, spatial, cg, cg * spatial, chunk,
                                                   plane_chunk, eps, SPLIT=split, BLOCK=block_s,
                                                   num_warps=cfg["num_warps"])
    sums = sums.sum(3)  # (2, N, C): per plane, sum dy and sum dy * xhat
    dw, db = sums[1].sum(0).to(weight.dtype), sums[0].sum(0).to(weight.dtype)
    if not dx:
        return None, dw, db
    coef = (sums * weight.float()).view(2, n * groups, cg).sum(2) / (cg * spatial)  # (2, N * G)
    gx = torch.empty_like(xc)
    _group_norm_bwd_dx_kernel[(n * c, triton.cdiv(spatial, block_s))](
        xc, weight.contiguous(), dyc, mean, m2, coef, gx, n * groups, c, spatial, cg, cg * spatial, chunk, eps,
        SPLIT=split, BLOCK=block_s, num_warps=cfg["num_warps"])
    return gx, dw, db


def _group_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernels where they apply (see ``registry.kernel_backward``), else None."""
    (x, groups, weight, bias, eps), (dy,) = args, grads
    if dy is None or not on_kernels(x, dy, weight, bias):
        return None
    gx, dw, db = group_norm_backward_launch(x, groups, weight, dy, eps, dx=needs[0])
    return gx, None, dw if needs[2] else None, db.to(bias.dtype) if needs[3] else None, None


@zoo_custom_op("cudal1::group_norm", mutates_args=(), ref=group_norm_ref, fast_backward=_group_norm_backward)
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
    TritonKernel("_group_norm_bwd_reduce_kernel", {
        "x_ptr": "*bf16", "dy_ptr": "*bf16", "mean_ptr": "*fp32", "m2_ptr": "*fp32", "sums_ptr": "*fp32",
        "n_planes": "i32", "spatial": "i32", "ch_per_group": "i32", "group_size": "i32", "chunk": "i32",
        "plane_chunk": "i32", "eps": "fp32"}, constexprs={"SPLIT": 16}),
    TritonKernel("_group_norm_bwd_dx_kernel", {
        "x_ptr": "*bf16", "w_ptr": "*bf16", "dy_ptr": "*bf16", "mean_ptr": "*fp32", "m2_ptr": "*fp32",
        "coef_ptr": "*fp32", "dx_ptr": "*bf16", "n_groups": "i32", "n_channels": "i32", "spatial": "i32",
        "ch_per_group": "i32", "group_size": "i32", "chunk": "i32", "eps": "fp32"}, constexprs={"SPLIT": 16}),
]
