"""Standard convolution with few input channels (1-D, 2-D, 3-D; any stride, padding, dilation; one group; optional
bias; optionally a depthwise-separable pair folded into one) as a direct convolution in CUDA C whose input rows are
staged in shared memory: fp32 FMA (no TF32), launched through ``cuda_jit.run`` (the driver's ``cuLaunchKernel``).
Written for the KernelBench level-1 2-D ``conv_standard_*`` / ``conv_pointwise`` solutions in ``kernelbench_v0``;
they now use :mod:`.conv_vec_cuda` (faster on those shapes), which falls back to this kernel for shapes it does not
take (rows that are not 16-byte multiples, a stride along rows, 1-D and 3-D).

Why a second kernel beside :mod:`.conv_cuda`: that one (each thread 8 output channels x ``WT`` consecutive
positions, its input window read from global memory with ``__ldg``) lost to cuDNN on the 2-D tasks (figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md). Its lanes' window loads are ``WT`` floats apart, so
one warp load touches 8 cache lines: about 80 L1 wavefronts per (input channel, kernel row) per warp, and the 8 warps
of a block each load the same windows. By count, on 63_conv_standard_2D, that L1 traffic takes about as long as the
output writes (264 MB) and longer than the FMAs. Here a block stages the input rows all its outputs need once, with
coalesced loads, and the threads read their windows from shared memory (16-byte reads where the window is
4-aligned); the FMA loop and the epilogue are those of :mod:`.conv_cuda`.

Through the harness (eager baseline) it won narrowly on 62, 63, 80 and 87 and lost on 55, 56 and 59 (3-D, 10-wide
rows), and a probe timed the folded separable pair of 86 slower than eager. It writes its output well below the
GPU's DRAM rate (116-124 registers a thread: two blocks a multiprocessor; not profiled).

Layout of a block (256 threads, 8 warps): warp ``w`` owns output channels ``64 b + 8 w .. + 7`` (``b`` =
``blockIdx.y``); the 32 lanes cover ``RPB`` output rows (a row is one (depth, row) of one sample) of ``CPRP``
chunks of ``WT`` consecutive positions each (``RPB * CPRP = 32``); a row longer than ``CPRP * WT`` positions is
split into ``NSEG`` segments, one block each. ``WT`` is chosen per shape so that few lanes idle (5 for a 10-wide
row). Shapes, strides and kernel sizes are compiled in (one NVRTC build per shape, cached by CuPy on disk).

x: (N, Cin, *spatial) float32 CUDA, 1-3 spatial dims; weight (Cout, Cin, *kernel); returns (N, Cout, *out)
float32. Elsewhere (CPU, other dtypes, several groups, no CuPy) :func:`conv` runs ``torch.nn.functional``.
"""

from __future__ import annotations

import functools

import torch

from .. import cuda_jit
from ..kernel_specs import CudaSource
from .conv_cuda import check_one_group, dispatch, geometry, separable_bias, torch_separable, usable

__all__ = ["THREADS", "conv", "conv_rows", "rows_layout", "rows_source", "separable_conv", "usable"]

#: threads per block (8 warps of 8 output channels)
THREADS = 256

_TEMPLATE = r"""
#define KT (CIN * KD * KH * KW)
#define NROWS (KD * KH)
#define WIN ((WT - 1) * SW + (KW - 1) * DW + 1)
#define NV ((WIN + 3) / 4)
#define VEC (SW == 1 && WT % 4 == 0)
#define STAGE (RPB * CIN * NROWS * SROW)
#define ROWS (OD * OH)
extern "C" __global__ void __launch_bounds__(256, 2)
conv_rows(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ dw,
          const float* __restrict__ bias, float* __restrict__ y)
{
    extern __shared__ float4 sm4[];
    float* ws = (float*)sm4;      // [KT][64] weights of the block's 64 output channels
    float* xs = ws + KT * 64;     // [RPB][CIN][KD * KH][SROW] staged input rows; then the epilogue buffer
    const int co0 = blockIdx.y * 64;
    for (int i = threadIdx.x; i < KT * 64; i += 256) {
        const int kk = i >> 6, c = i & 63, co = co0 + c;
        float v = 0.f;
        if (co < COUT) {
#if FACTOR
            const int ci = kk / (KD * KH * KW), tap = kk % (KD * KH * KW);
            v = w[co * CIN + ci] * dw[ci * (KD * KH * KW) + tap];
#else
            v = w[(long long)co * KT + kk];
#endif
        }
        ws[i] = v;
    }
    long long b = blockIdx.x;
    const int seg = (int)(b % NSEG);
    b /= NSEG;
    const int grp = (int)(b % NGRP);
    const long long n = b / NGRP;
    const int iw0 = seg * CPRP * WT * SW - PW;
    const float* xn = x + n * (long long)CIN * ID * IH * IW;
    for (int i = threadIdx.x; i < STAGE; i += 256) {
        const int t = i % SROW;
        int q = i / SROW;
        const int kk = q % NROWS;
        q /= NROWS;
        const int ci = q % CIN, r = q / CIN;
        const int row = grp * RPB + r;
        const int od = row / OH, oh = row % OH;
        const int id = od * SD - PD + (kk / KH) * DD, ih = oh * SH - PH + (kk % KH) * DH, iw = iw0 + t;
        float v = 0.f;
        if (row < ROWS && id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW)
            v = __ldg(xn + ((long long)(ci * ID + id) * IH + ih) * IW + iw);
        xs[i] = v;
    }
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int lr = lane / CPRP, lc = lane % CPRP;
    float acc[8][WT];
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
        for (int j = 0; j < WT; ++j) acc[c][j] = 0.f;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci) {
#pragma unroll
        for (int kk = 0; kk < NROWS; ++kk) {
            const float* src = xs + ((lr * CIN + ci) * NROWS + kk) * SROW + lc * WT * SW;
            float win[VEC ? NV * 4 : WIN];
#if VEC
#pragma unroll
            for (int v = 0; v < NV; ++v) {
                const float4 f = ((const float4*)src)[v];
                win[4 * v] = f.x; win[4 * v + 1] = f.y; win[4 * v + 2] = f.z; win[4 * v + 3] = f.w;
            }
#else
#pragma unroll
            for (int t = 0; t < WIN; ++t) win[t] = src[t];
#endif
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const int tap = (ci * NROWS + kk) * KW + kw;
                const float4 wa = sm4[tap * 16 + warp * 2];
                const float4 wb = sm4[tap * 16 + warp * 2 + 1];
                const float wv[8] = {wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w};
#pragma unroll
                for (int j = 0; j < WT; ++j) {
                    const float xv = win[j * SW + kw * DW];
#pragma unroll
                    for (int c = 0; c < 8; ++c) acc[c][j] = fmaf(wv[c], xv, acc[c][j]);
                }
            }
        }
    }
    __syncthreads();  // the staged rows are read by every warp: free them before the epilogue reuses the space
    // epilogue, one channel at a time: a thread's WT outputs go to the warp's buffer, then lane l stores buffer
    // entries l, l + 32, ...: consecutive lanes store consecutive positions of a row
    float* buf = xs + warp * (32 * WT);
    float* dst[WT];
    bool keep[WT];
#pragma unroll
    for (int k = 0; k < WT; ++k) {
        const int p = k * 32 + lane, tl = p / WT, j = p % WT;
        const int row = grp * RPB + tl / CPRP;
        const int ow = (seg * CPRP + tl % CPRP) * WT + j;
        keep[k] = row < ROWS && ow < OW;
        const int od = row / OH, oh = row % OH;
        dst[k] = y + ((n * COUT * OD + od) * (long long)OH + oh) * OW + ow;
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) {
        const int co = co0 + warp * 8 + c;
#if HAS_BIAS
        const float bv = co < COUT ? bias[co] : 0.f;
#else
        const float bv = 0.f;
#endif
#if WT % 4 == 0
#pragma unroll
        for (int j = 0; j < WT; j += 4)
            *(float4*)&buf[lane * WT + j] = make_float4(acc[c][j] + bv, acc[c][j + 1] + bv, acc[c][j + 2] + bv,
                                                        acc[c][j + 3] + bv);
#else
#pragma unroll
        for (int j = 0; j < WT; ++j) buf[lane * WT + j] = acc[c][j] + bv;
#endif
        __syncwarp();
        if (co < COUT) {
            const long long cstride = (long long)co * OD * OH * OW;
#pragma unroll
            for (int k = 0; k < WT; ++k)
                if (keep[k]) dst[k][cstride] = buf[k * 32 + lane];
        }
        __syncwarp();
    }
}
"""

#: chunk widths tried per shape (positions per thread)
_WT_CHOICES = (8, 7, 6, 5, 4)


def rows_layout(ow: int) -> tuple[int, int, int, int]:
    """``(WT, CPRP, RPB, NSEG)`` for output rows of ``ow`` positions: the chunk width ``WT`` whose lanes cover the
    row with the least idle positions (a multiple of 4 preferred on a tie: 16-byte window reads), lanes per row
    segment ``CPRP`` (a power of two <= 32), rows per block ``RPB = 32 / CPRP`` and segments per row ``NSEG``."""
    if ow <= 0:
        raise ValueError(f"output row width must be positive, got {ow}")

    def layout(wt: int) -> tuple[int, int, int, int]:
        cpr = -(-ow // wt)
        cprp = min(32, 1 << (cpr - 1).bit_length())
        return wt, cprp, 32 // cprp, -(-cpr // cprp)

    def score(wt: int) -> tuple[float, bool, int]:
        _, cprp, _, nseg = layout(wt)
        return ow / (nseg * cprp * wt), wt % 4 == 0, wt

    return layout(max(_WT_CHOICES, key=score))


@functools.lru_cache(maxsize=64)
def rows_source(n: int, cin: int, cout: int, spatial: tuple[int, int, int], kernel: tuple[int, int, int],
                stride: tuple[int, int, int], padding: tuple[int, int, int], dilation: tuple[int, int, int],
                factor: bool, has_bias: bool) -> tuple[CudaSource, tuple[int, int, int], tuple[int, int], int]:
    """The CUDA source for one shape (everything compiled in), its output size (OD, OH, OW), the grid and the
    dynamic shared memory in bytes."""
    out = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                for i, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True))
    if min(out) <= 0:
        raise ValueError(f"convolution output size {out} is empty for input size {spatial}, kernel {kernel}")
    wt, cprp, rpb, nseg = rows_layout(out[2])
    # a staged row: every input column the segment's windows read, rounded up to 4 floats (16-byte rows) with
    # 4 floats of slack for the last lane's rounded-up 16-byte window read
    srow = -(-((cprp * wt - 1) * stride[2] + (kernel[2] - 1) * dilation[2] + 1) // 4) * 4 + 4
    ngrp = -(-(out[0] * out[1]) // rpb)
    consts = dict(CIN=cin, COUT=cout, ID=spatial[0], IH=spatial[1], IW=spatial[2], OD=out[0], OH=out[1], OW=out[2],
                  KD=kernel[0], KH=kernel[1], KW=kernel[2], SD=stride[0], SH=stride[1], SW=stride[2],
                  PD=padding[0], PH=padding[1], PW=padding[2], DD=dilation[0], DH=dilation[1], DW=dilation[2],
                  WT=wt, CPRP=cprp, RPB=rpb, NSEG=nseg, NGRP=ngrp, SROW=srow, FACTOR=int(factor),
                  HAS_BIAS=int(has_bias))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    name = "conv_rows_" + "_".join(str(v) for v in consts.values())
    taps = cin * kernel[0] * kernel[1] * kernel[2]
    stage = rpb * cin * kernel[0] * kernel[1] * srow
    smem = (taps * 64 + max(stage, 8 * 32 * wt)) * 4
    grid = (n * ngrp * nseg, -(-cout // 64))
    return CudaSource(name, head + _TEMPLATE, ("conv_rows",)), out, grid, smem  # type: ignore[return-value]


def _launch(x: torch.Tensor, w: torch.Tensor, dw: torch.Tensor | None, bias: torch.Tensor | None,
            kernel: tuple[int, ...], cout: int, stride, padding, dilation) -> torch.Tensor:
    nd, sp, ks, s, p, d = geometry(x, kernel, stride, padding, dilation)
    n, cin = x.shape[:2]
    src, out, grid, smem = rows_source(n, cin, cout, sp, ks, s, p, d, dw is not None, bias is not None)
    if smem > 227 * 1024:
        raise ValueError(f"convolution {tuple(x.shape)} with kernel {kernel} needs {smem} bytes of shared memory "
                         f"per block (more than 227 KB): use conv_cuda or torch.nn.functional")
    y = torch.empty((n, cout) + out[3 - nd:], device=x.device, dtype=torch.float32)
    cuda_jit.run(src, "conv_rows", grid, (THREADS,), "ppppp",
                 (x, w, dw if dw is not None else w, bias if bias is not None else w, y), x.device, shared_mem=smem)
    return y


def conv_rows(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
              dilation=1) -> torch.Tensor:
    """The CUDA kernel, unconditionally. x: (N, Cin, *spatial) fp32 CUDA with 1-3 spatial dims; weight: (Cout, Cin,
    *kernel); bias: (Cout,) or None; stride / padding / dilation: an int or one per spatial dimension.
    Returns (N, Cout, *out) fp32."""
    check_one_group(x, weight)
    return _launch(x.contiguous(), weight.contiguous(), None, bias, tuple(weight.shape[2:]), weight.shape[0],
                   stride, padding, dilation)


def conv(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0, dilation=1,
         groups: int = 1) -> torch.Tensor:
    """Convolution with ``torch.nn.functional.conv{1,2,3}d``'s arguments: the CUDA kernel for one-group fp32 CUDA
    tensors (CuPy installed), the PyTorch function elsewhere (same math)."""
    return dispatch(conv_rows, x, weight, bias, stride, padding, dilation, groups)


def separable_conv(x: torch.Tensor, dw: torch.Tensor, dw_bias: torch.Tensor | None, pw: torch.Tensor,
                   pw_bias: torch.Tensor | None, stride=1, padding=0, dilation=1) -> torch.Tensor:
    """A depthwise convolution (``dw``: (Cin, 1, *kernel), groups = Cin, with stride / padding / dilation) followed
    by a pointwise one (``pw``: (Cout, Cin, 1, ...)), as one convolution with weight ``pw[co, ci] * dw[ci, tap]``
    (formed in the kernel) and bias ``pw @ dw_bias + pw_bias``: linear maps compose, for every input and parameter
    value. The CUDA kernel for fp32 CUDA tensors, the two PyTorch convolutions elsewhere.
    x: (N, Cin, *spatial); returns (N, Cout, *out)."""
    if not (isinstance(padding, (int, tuple, list)) and usable(x, dw, pw, dw_bias, pw_bias)):
        return torch_separable(x, dw, dw_bias, pw, pw_bias, stride, padding, dilation)
    bias = separable_bias(x, dw, dw_bias, pw, pw_bias)
    return _launch(x.contiguous(), pw.contiguous(), dw.contiguous(), bias, tuple(dw.shape[2:]), pw.shape[0],
                   stride, padding, dilation)
