"""2-D transposed convolution whose taps never meet (the kernel's taps fall on distinct residues modulo the stride
in each dimension, so every output position takes at most one tap per dimension) as a CUDA C kernel that writes
whole output rows (fp32 FMA, no TF32), launched through ``cuda_jit.run`` (the driver's ``cuLaunchKernel``). For
KernelBench level 1's ``81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__``
(stride 5, dilation 2, kernel 3: the taps land on residues 0, 2, 4 mod 5).

Gather form: ``y[n, co, oh, ow] = b[co] + sum_ci x[n, ci, ih, iw] w[ci, co, kh, kw]`` where ``kh`` is the one tap
with ``(oh + PH - kh DH) % SH == 0`` (``ih`` its quotient, inside the input) and likewise ``kw``; a position
with no such tap in either dimension is the bias (zero).

Layout: ``kw`` depends only on ``(ow + PW) % SW``, so a lane owns ``SW`` consecutive positions of a row (one of each
residue, tap indices compiled in) and all 32 lanes of a warp use the same weights at each step (broadcast reads from
shared memory). A block covers ``32 * SW`` columns and 64 output channels (warp ``w``: channels ``8 w .. 8 w + 7``) of
up to :data:`ROWS_PER_BLOCK` rows of one residue class modulo ``SH``, which share one tap ``kh`` and so one staging of
the weights; it reads ``x`` rows with coalesced loads and stores through a shared-memory transpose, each warp store 32
consecutive floats: the output, mostly zeros, is written once at full width. Through the harness on task 81 (eager
baseline; figures: benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md) it beat eager clearly; one row a
block (the weights staged per row) won by less, and the Triton implicit GEMM of :mod:`.conv_transpose`, which writes
one residue class per program (stride-``SW`` stores), lost to eager.

x: (N, Cin, IH, IW) float32 CUDA; weight (Cin, Cout, KH, KW) (``nn.ConvTranspose2d``'s, one group); bias (Cout,)
or None; returns (N, Cout, OH, OW) float32. :func:`disjoint_taps` says whether a shape qualifies; elsewhere (CPU,
other dtypes, groups, taps that meet, no CuPy) :func:`conv_transpose2d` runs ``torch.nn.functional.conv_transpose2d``.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from .. import cuda_jit
from ..kernel_specs import CudaSource

__all__ = ["ROWS_PER_BLOCK", "THREADS", "conv_transpose2d", "convt_disjoint", "convt_source", "disjoint_taps",
           "residue_taps"]

#: threads per block (8 warps of 8 output channels)
THREADS = 256
#: output rows a block computes (rows of one residue class modulo the stride, so one staged set of weights)
ROWS_PER_BLOCK = 8

_TEMPLATE = r"""
extern "C" __global__ void __launch_bounds__(256)
convt_disjoint(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
               float* __restrict__ y)
{
    extern __shared__ float4 sm4[];
    float* ws = (float*)sm4;          // [CIN][KW][64]: the weights of this row class's tap kh
    float* buf = ws + CIN * KW * 64;  // [8 warps][32 * SW] epilogue
    const int co0 = blockIdx.y * 64;
    long long b = blockIdx.x;
    const int seg = (int)(b % NSEG);
    b /= NSEG;
    const int grp = (int)(b % NGRP);
    b /= NGRP;
    const int cls = (int)(b % SH);  // the block's rows: oh = cls + SH * (grp * RB + t), one tap kh for all
    const long long n = b / SH;
    int kh = -1;
#pragma unroll
    for (int k = 0; k < KH; ++k)
        if (kh < 0 && ((cls + PH - k * DH) % SH + SH) % SH == 0) kh = k;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (kh >= 0) {  // uniform over the block
        // kw fastest: a warp's loads cover a few runs of KW consecutive floats
        for (int i = threadIdx.x; i < CIN * KW * 64; i += 256) {
            const int kw = i % KW, q = i / KW, c = q & 63, ci = q >> 6, co = co0 + c;
            ws[(ci * KW + kw) * 64 + c] = co < COUT ? w[((long long)(ci * COUT + co) * KH + kh) * KW + kw] : 0.f;
        }
        __syncthreads();
    }
    const int j = seg * 32 + lane;  // input column base: ow = SW * j + r
    float* wbuf = buf + warp * (32 * SW);
#pragma unroll 1
    for (int t = 0; t < RB; ++t) {
        const int oh = cls + SH * (grp * RB + t);
        if (oh >= OH) break;
        const int th = oh + PH - kh * DH;
        const bool live = kh >= 0 && th >= 0 && th / SH < IH;
        float acc[8][SW];
#pragma unroll
        for (int c = 0; c < 8; ++c)
#pragma unroll
            for (int r = 0; r < SW; ++r) acc[c][r] = 0.f;
        if (live) {
            const float* xr = x + ((n * CIN) * IH + th / SH) * (long long)IW;
#pragma unroll 2
            for (int ci = 0; ci < CIN; ++ci) {
                const float* xc = xr + (long long)ci * IH * IW;
#define TAP(r, KWR, OFF)                                                                          \
                {                                                                                 \
                    const int iw = j + OFF;                                                       \
                    const float xv = (iw >= 0 && iw < IW) ? __ldg(xc + iw) : 0.f;                 \
                    const float4 wa = sm4[(ci * KW + KWR) * 16 + warp * 2];                       \
                    const float4 wb = sm4[(ci * KW + KWR) * 16 + warp * 2 + 1];                   \
                    acc[0][r] = fmaf(wa.x, xv, acc[0][r]); acc[1][r] = fmaf(wa.y, xv, acc[1][r]); \
                    acc[2][r] = fmaf(wa.z, xv, acc[2][r]); acc[3][r] = fmaf(wa.w, xv, acc[3][r]); \
                    acc[4][r] = fmaf(wb.x, xv, acc[4][r]); acc[5][r] = fmaf(wb.y, xv, acc[5][r]); \
                    acc[6][r] = fmaf(wb.z, xv, acc[6][r]); acc[7][r] = fmaf(wb.w, xv, acc[7][r]); \
                }
TAPS
#undef TAP
            }
        }
        const long long rowbase = ((n * COUT) * OH + oh) * (long long)OW;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            const int co = co0 + warp * 8 + c;
#if HAS_BIAS
            const float bv = co < COUT ? bias[co] : 0.f;
#else
            const float bv = 0.f;
#endif
#pragma unroll
            for (int r = 0; r < SW; ++r) wbuf[lane * SW + r] = acc[c][r] + bv;
            __syncwarp();
            if (co < COUT) {
                float* dst = y + rowbase + (long long)co * OH * OW + seg * 32 * SW;
#pragma unroll
                for (int k = 0; k < SW; ++k) {
                    const int p = k * 32 + lane;
                    if (seg * 32 * SW + p < OW) dst[p] = wbuf[p];
                }
            }
            __syncwarp();
        }
    }
}
"""


def residue_taps(k: int, s: int, p: int, d: int) -> list[int] | None:
    """For one dimension: per residue ``r`` of an output index modulo ``s`` (``o = s j + r``), the one tap ``kw``
    with ``(o + p - kw d) % s == 0`` (or -1 where none does); None where two taps share a residue (the taps meet)."""
    taps = [-1] * s
    for kk in range(k):
        r = (kk * d - p) % s
        if taps[r] >= 0:
            return None
        taps[r] = kk
    return taps


def disjoint_taps(kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int],
                  dilation: tuple[int, int]) -> bool:
    """Whether every output position of this 2-D transposed convolution takes at most one tap per dimension."""
    return all(residue_taps(k, s, p, d) is not None for k, s, p, d in zip(kernel, stride, padding, dilation,
                                                                            strict=True))


def _pair(v, name: str) -> tuple[int, int]:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or two ints, got {v!r}")
    return t  # type: ignore[return-value]


@functools.lru_cache(maxsize=32)
def convt_source(n: int, cin: int, cout: int, size: tuple[int, int], kernel: tuple[int, int],
                 stride: tuple[int, int], padding: tuple[int, int], output_padding: tuple[int, int],
                 dilation: tuple[int, int], has_bias: bool) -> tuple[CudaSource, tuple[int, int], tuple[int, int], int]:
    """The CUDA source for one shape (everything compiled in), the output size (OH, OW), the grid and the dynamic
    shared memory in bytes. Raises ValueError where the taps meet (:func:`disjoint_taps`)."""
    wtaps = residue_taps(kernel[1], stride[1], padding[1], dilation[1])
    if wtaps is None or residue_taps(kernel[0], stride[0], padding[0], dilation[0]) is None:
        raise ValueError(f"transposed convolution with kernel {kernel}, stride {stride}, padding {padding}, dilation "
                         f"{dilation}: two taps reach the same output position; use conv_transpose (Triton) or "
                         f"torch.nn.functional.conv_transpose2d")
    out = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for i, k, s, p, op, d in zip(size, kernel, stride, padding, output_padding, dilation, strict=True))
    if min(out) <= 0:
        raise ValueError(f"transposed convolution output size {out} is empty for input size {size}")
    sw, pw, dw = stride[1], padding[1], dilation[1]
    # lane position r of column block j is ow = sw * j + r: its tap kw satisfies (r + pw - kw dw) = sw * off
    lines = [f"            TAP({r}, {kw}, {(r + pw - kw * dw) // sw})" for r, kw in enumerate(wtaps) if kw >= 0]
    nseg = -(-out[1] // (32 * sw))
    # a block owns up to ROWS_PER_BLOCK rows of one residue class mod SH (one tap kh: its weights staged once)
    per_class = -(-out[0] // stride[0])
    rb = min(ROWS_PER_BLOCK, per_class)
    ngrp = -(-per_class // rb)
    consts = dict(CIN=cin, COUT=cout, IH=size[0], IW=size[1], OH=out[0], OW=out[1], KH=kernel[0], KW=kernel[1],
                  SH=stride[0], SW=sw, PH=padding[0], PW=pw, DH=dilation[0], DW=dw, NSEG=nseg, RB=rb, NGRP=ngrp,
                  HAS_BIAS=int(has_bias))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    code = head + _TEMPLATE.replace("TAPS", "\n".join(lines))
    name = "convt_disjoint_" + "_".join(str(v) for v in consts.values())
    smem = (cin * kernel[1] * 64 + 8 * 32 * sw) * 4
    grid = (n * stride[0] * ngrp * nseg, -(-cout // 64))
    return CudaSource(name, code, ("convt_disjoint",)), out, grid, smem  # type: ignore[return-value]


def convt_disjoint(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                   output_padding=0, dilation=1) -> torch.Tensor:
    """The CUDA kernel, unconditionally (see the module docstring for shapes). Raises ValueError for taps that
    meet, a grouped weight or more than 227 KB of shared memory."""
    n, cin, ih, iw = x.shape
    if weight.dim() != 4 or weight.shape[0] != cin:
        raise ValueError(f"weight {tuple(weight.shape)} is not (Cin={cin}, Cout, KH, KW) (one group only)")
    cout = weight.shape[1]
    src, out, grid, smem = convt_source(n, cin, cout, (ih, iw), tuple(weight.shape[2:]), _pair(stride, "stride"),
                                        _pair(padding, "padding"), _pair(output_padding, "output_padding"),
                                        _pair(dilation, "dilation"), bias is not None)
    if smem > 227 * 1024:
        raise ValueError(f"{cin} input channels need {smem} bytes of shared memory per block (over 227 KB)")
    x, weight = x.contiguous(), weight.contiguous()
    y = torch.empty((n, cout) + out, device=x.device, dtype=torch.float32)
    cuda_jit.run(src, "convt_disjoint", grid, (THREADS,), "pppp",
                 (x, weight, bias if bias is not None else weight, y), x.device, shared_mem=smem)
    return y


def conv_transpose2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """``torch.nn.functional.conv_transpose2d`` with its arguments: the CUDA kernel for one-group fp32 CUDA tensors
    whose taps never meet (CuPy installed), the PyTorch function elsewhere (same math)."""
    k = tuple(weight.shape[2:])
    fits = (groups == 1 and x.dim() == 4 and x.is_cuda and x.dtype == torch.float32
            and weight.dtype == torch.float32 and (bias is None or bias.dtype == torch.float32)
            and cuda_jit.cupy_available()
            and disjoint_taps(k, _pair(stride, "stride"), _pair(padding, "padding"), _pair(dilation, "dilation")))
    if fits:
        return convt_disjoint(x, weight, bias, stride, padding, output_padding, dilation)
    return F.conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation)
