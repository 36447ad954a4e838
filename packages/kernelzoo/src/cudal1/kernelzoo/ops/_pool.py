"""Shared Triton kernel and launcher of the pooling ops (avg_pool2d, avg_pool3d, max_pool2d): windows over the
last three dimensions of a contiguous (planes, D, H, W) view (D = 1 for 2-D pooling), floor mode (no
``ceil_mode``), no dilation. One program per (plane, output depth, BLOCK_H x BLOCK_W output tile); the window
taps are unrolled (kernel size, stride and padding are compile-time constants), each a masked load of the
tile's inputs; overlapping windows re-read their inputs from L1/L2, so DRAM sees about one read of the input
and one write of the output.

Max: padding is -inf and a NaN in the window makes the output NaN (``val > max or isnan(val)``, as
PyTorch's CUDA kernel). Average: the sum over in-bounds taps divided by the window size (``count_include_pad``)
or by the number of in-bounds taps.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton


@triton.jit
def _pool_kernel(x_ptr, y_ptr, D, H, W, OD, OH, OW,
                 KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, SD: tl.constexpr, SH: tl.constexpr,
                 SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr, IS_MAX: tl.constexpr,
                 COUNT_PAD: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    pid0 = tl.program_id(0)
    od = pid0 % OD
    plane = (pid0 // OD).to(tl.int64)
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    out_mask = (oh[:, None] < OH) & (ow[None, :] < OW)
    x_base = x_ptr + plane * D * H * W
    if IS_MAX:
        acc = tl.full((BLOCK_H, BLOCK_W), float("-inf"), tl.float32)
    else:
        acc = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
        cnt = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
    for kd in tl.static_range(KD):
        idp = od * SD - PD + kd
        idv = oh * 0 + idp  # the input depth as a vector: one mask expression for the interpreter and the GPU
        for kh in tl.static_range(KH):
            ih = oh * SH - PH + kh
            h_ok = out_mask & ((ih >= 0) & (ih < H) & (idv >= 0) & (idv < D))[:, None]
            row = (idp * H + ih).to(tl.int64) * W
            for kw in tl.static_range(KW):
                iw = ow * SW - PW + kw
                m = h_ok & ((iw >= 0) & (iw < W))[None, :]
                if IS_MAX:
                    v = tl.load(x_base + row[:, None] + iw[None, :], mask=m, other=float("-inf"))
                    acc = tl.where((v > acc) | (v != v), v, acc)
                else:
                    acc += tl.load(x_base + row[:, None] + iw[None, :], mask=m, other=0.0)
                    if not COUNT_PAD:
                        cnt += m.to(tl.float32)
    if IS_MAX:
        out = acc
    elif COUNT_PAD:
        out = acc / (KD * KH * KW)
    else:
        out = acc / tl.maximum(cnt, 1.0)
    y_off = (pid0.to(tl.int64) * OH + oh[:, None]) * OW + ow[None, :]
    tl.store(y_ptr + y_off, out, mask=out_mask)


def _triple(v: int | tuple[int, ...], n: int, what: str) -> tuple[int, ...]:
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) != n or any(not isinstance(i, int) for i in t):
        raise ValueError(f"{what} must be an int or {n} ints, got {v!r}")
    return t


def pool_out_size(size: int, k: int, s: int, p: int) -> int:
    """Output length of one pooled dimension in floor mode (as PyTorch with ``ceil_mode=False``)."""
    return (size + 2 * p - k) // s + 1


def pool_geometry(x: torch.Tensor, nd: int, kernel_size, stride, padding
                  ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(kernel, stride, padding, spatial, out_spatial) of ``nd``-D pooling of ``x`` (N, C, *spatial) or
    (C, *spatial), validated (ValueError): the forward's and the backward kernels' one reading of the arguments."""
    if x.dim() not in (nd + 1, nd + 2):
        raise ValueError(f"{nd}-D pooling takes an (N, C, {nd} spatial dims) or (C, {nd} spatial dims) tensor, "
                         f"got shape {tuple(x.shape)}")
    k = _triple(kernel_size, nd, "kernel_size")
    s = _triple(stride if stride is not None and stride != () else kernel_size, nd, "stride")
    p = _triple(padding, nd, "padding")
    if any(i <= 0 for i in k + s) or any(pi < 0 or 2 * pi > ki for pi, ki in zip(p, k, strict=True)):
        raise ValueError(f"kernel_size and stride must be positive and padding at most half the kernel size, "
                         f"got kernel_size={k}, stride={s}, padding={p}")
    spatial = tuple(x.shape[-nd:])
    out_sp = tuple(pool_out_size(n, ki, si, pi) for n, ki, si, pi in zip(spatial, k, s, p, strict=True))
    return k, s, p, spatial, out_sp


def pool_launch(x: torch.Tensor, nd: int, kernel_size, stride, padding, is_max: bool, count_include_pad: bool,
                config: dict) -> torch.Tensor:
    """Pool the last ``nd`` (2 or 3) dimensions of ``x`` (N, C, *spatial) or (C, *spatial) with ``config``
    (BLOCK_H, BLOCK_W, num_warps); float32 -> float32 contiguous."""
    if x.dtype != torch.float32:
        raise TypeError(f"pooling takes float32 input, got {x.dtype}")
    k, s, p, spatial, out_sp = pool_geometry(x, nd, kernel_size, stride, padding)
    if any(o <= 0 for o in out_sp):
        raise ValueError(f"input spatial size {spatial} is too small for kernel_size={k}, padding={p}")
    if nd == 2:
        k, s, p, spatial, out_sp = (1, *k), (1, *s), (0, *p), (1, *spatial), (1, *out_sp)
    xc = x.contiguous()
    y = torch.empty((*x.shape[:-nd], *out_sp[3 - nd:]), device=x.device, dtype=torch.float32)
    planes = xc.numel() // max(1, spatial[0] * spatial[1] * spatial[2])
    if y.numel():
        bw = min(config["BLOCK_W"], triton.next_power_of_2(out_sp[2]))
        bh = min(config["BLOCK_H"], triton.next_power_of_2(out_sp[1]))
        grid = (planes * out_sp[0], triton.cdiv(out_sp[1], bh), triton.cdiv(out_sp[2], bw))
        _pool_kernel[grid](xc, y, *spatial, *out_sp, KD=k[0], KH=k[1], KW=k[2], SD=s[0], SH=s[1], SW=s[2],
                           PD=p[0], PH=p[1], PW=p[2], IS_MAX=is_max, COUNT_PAD=count_include_pad,
                           BLOCK_H=bh, BLOCK_W=bw, num_warps=config["num_warps"])
    return y


POOL_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "D": "i32", "H": "i32", "W": "i32", "OD": "i32", "OH": "i32",
                  "OW": "i32"}
