"""Convolution with a small reduction (input channels x kernel taps <= :data:`MAX_K`, e.g. 3 channels and a 3x3
or 3x5 kernel) as an implicit GEMM in CUDA C, built like the small-K GEMM of :mod:`.skinny_gemm_cuda`: fp32 FMA
(no TF32), launched through ``cuda_jit.run`` (the driver's ``cuLaunchKernel``). For KernelBench level 1's
``59_conv_standard_3D`` (a (3, 3, 1) kernel: a 2-D convolution of every depth slice).

Through the harness (eager baseline; benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md) it beat cuDNN on
59. On the 2-D tasks with 3 input channels (55, 56, 62, 63, 80) it lost or tied, and their solutions keep
:mod:`.conv_rows_cuda` (a probe had conv_rows_cuda faster than eager on 55, 63 and 80 and this kernel mixed there;
figures: benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md). Not profiled: each block stages its operands,
then computes, then stores, with no overlap inside the block (64-66 registers, 21-37 KB of shared memory).

Why: with K = 27 or 45 products per output these convolutions cost their output writes (131-264 MB at the 2-D task
sizes, 2.64 GB for 59) and a few hundred MFMA; cuDNN's fp32 kernels (TF32 off) write well below the GPU's DRAM rate,
and so did :mod:`.conv_rows_cuda` (a little faster than eager on the 2-D tasks, slower on 59). A block here computes
64 output channels x 128 consecutive output positions of one sample (positions flattened over the output plane, so no
lane idles at row ends): it stages the weights (K x 64, transposed) and the implicit-GEMM operand (K x 128: for each
(channel, tap) the input value each position reads, zero in the padding) in shared memory, then each of its 256
threads accumulates 4 channels x 8 positions (float4 shared-memory reads, as the GEMM) in (channel, kernel row, kernel
column) order and writes them with float4 streaming stores: a warp writes two 256-byte runs of each of its channels'
rows.

A 3-D convolution whose kernel is 1 along the last dimension, with stride 1, no padding there and stride 1 along
the dimension before it, is the 2-D convolution of the (N, C, A, B * D) view with the column taps D apart (their
dilation times D, their padding times D); the output (N, O, OA, OB * D) is the 3-D output's memory.

x: (N, C, H, W) or (N, C, A, B, D) float32 CUDA; weight (O, C, *kernel) with O a multiple of 64; optional bias (O,);
one group. The kernel runs when K = C x taps <= :data:`MAX_K`, the output plane has a multiple of 4 values, and
every index fits in 32 bits; elsewhere (CPU, other dtypes, other shapes, no CuPy) :func:`conv` runs
``torch.nn.functional``. Shapes are compiled in (one NVRTC build per shape).
"""

from __future__ import annotations

import functools

import torch

from .. import cuda_jit
from ..kernel_specs import CudaSource
from .conv_cuda import _torch_conv, dispatch, geometry

__all__ = ["MAX_K", "OUT_TILE", "THREADS", "conv", "conv2d_cuda", "conv_source", "last_dim_pointwise_2d"]

MAX_K = 56  #: largest reduction (channels x taps, rounded up to 4): both staged operands fit 48 KB of shared memory
OUT_TILE = 64  #: output channels per block (the weight's output channels must be a multiple)
THREADS = 256

_SOURCE = r"""
/* y (N, O, OH, OW) = conv2d(x (N, C, H, W), w (O, C, KH, KW)) + bias; every size compile-time; stride SH, SW,
   padding PH, PW, dilation DH, DW. One block: 64 output channels (blockIdx.y) x 128 flattened positions of one
   sample (blockIdx.x = sample * TILES + tile). Needs (OH * OW) % 4 == 0. */
#define BN 128
#define K (C * KH * KW)
#define KP ((K + 3) / 4 * 4)
extern "C" __global__ void __launch_bounds__(256) conv_small_k(const float* __restrict__ x,
                                                               const float* __restrict__ w,
                                                               const float* __restrict__ bias,
                                                               float* __restrict__ y) {
    __shared__ __align__(16) float ws[KP][64];
    __shared__ __align__(16) float xs[KP][BN];
    constexpr int OHW = OH * OW;
    constexpr int TILES = (OHW + BN - 1) / BN;
    const int tid = threadIdx.x;
    const int n = blockIdx.x / TILES;
    const int p0 = (blockIdx.x % TILES) * BN;
    const int o0 = blockIdx.y * 64;
#pragma unroll
    for (int f = tid; f < KP * 64; f += 256) {
        const int k = f / 64, o = f % 64;  /* consecutive threads: consecutive banks */
        ws[k][o] = k < K ? __ldg(w + (o0 + o) * K + k) : 0.0f;
    }
    const float* xn = x + (long long)n * (C * H * W);
#pragma unroll
    for (int f = tid; f < KP * BN; f += 256) {
        const int k = f / BN, p = f % BN;
        const int pos = p0 + p;
        float v = 0.0f;
        if (k < K && pos < OHW) {
            const int c = k / (KH * KW), kh = (k % (KH * KW)) / KW, kw = k % KW;
            const int ih = (pos / OW) * SH - PH + kh * DH, iw = (pos % OW) * SW - PW + kw * DW;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = __ldg(xn + (c * H + ih) * W + iw);
        }
        xs[k][p] = v;
    }
    __syncthreads();
    const int tx = tid & 15, ty = tid >> 4;
    float acc[4][8];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
#pragma unroll
    for (int k = 0; k < KP; ++k) {
        const float4 a = reinterpret_cast<const float4*>(&ws[k][0])[ty];
        const float4 b0 = reinterpret_cast<const float4*>(&xs[k][0])[tx];
        const float4 b1 = reinterpret_cast<const float4*>(&xs[k][64])[tx];
        const float ar[4] = {a.x, a.y, a.z, a.w};
        const float br[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    float* yn = y + ((long long)n * O + o0) * OHW + p0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int o = ty * 4 + i;
        const float b = HAS_BIAS ? __ldg(bias + o0 + o) : 0.0f;
        float* row = yn + (long long)o * OHW;
        if (p0 + tx * 4 < OHW)
            __stcs(reinterpret_cast<float4*>(row) + tx,
                   make_float4(acc[i][0] + b, acc[i][1] + b, acc[i][2] + b, acc[i][3] + b));
        if (p0 + 64 + tx * 4 < OHW)
            __stcs(reinterpret_cast<float4*>(row + 64) + tx,
                   make_float4(acc[i][4] + b, acc[i][5] + b, acc[i][6] + b, acc[i][7] + b));
    }
}
"""


def _out(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@functools.lru_cache(maxsize=64)
def conv_source(c: int, h: int, w: int, o: int, kernel: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], dilation: tuple[int, int], has_bias: bool) -> tuple[CudaSource, int, int]:
    """The kernel's source for one 2-D shape, with the output size (OH, OW). Raises ValueError for shapes it does
    not take (see the module docstring)."""
    kh, kw = kernel
    oh, ow = (_out(h, kh, stride[0], padding[0], dilation[0]), _out(w, kw, stride[1], padding[1], dilation[1]))
    kp = -(-c * kh * kw // 4) * 4
    problems = []
    if kp > MAX_K:
        problems.append(f"K = {c} x {kh} x {kw} rounds to {kp} > {MAX_K}")
    if o % OUT_TILE:
        problems.append(f"{o} output channels, not a multiple of {OUT_TILE}")
    if oh <= 0 or ow <= 0 or (oh * ow) % 4:
        problems.append(f"output plane {oh} x {ow}: empty or not a multiple of 4 values")
    if c * h * w >= 2**31 or o * c * kh * kw >= 2**31:
        problems.append("a sample's input or the weight has 2**31 values or more")
    if problems:
        raise ValueError("conv_small_k does not take this shape: " + "; ".join(problems))
    consts = dict(C=c, H=h, W=w, O=o, KH=kh, KW=kw, SH=stride[0], SW=stride[1], PH=padding[0], PW=padding[1],
                  DH=dilation[0], DW=dilation[1], OH=oh, OW=ow, HAS_BIAS=int(has_bias))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    name = "conv_small_k_" + "_".join(str(v) for v in consts.values())
    return CudaSource(name, head + _SOURCE, ("conv_small_k",)), oh, ow


def conv2d_cuda(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=(1, 1), padding=(0, 0),
                dilation=(1, 1)) -> torch.Tensor:
    """The kernel, unconditionally: x (N, C, H, W) and weight (O, C, KH, KW) float32 CUDA (made contiguous), bias
    (O,) or None -> (N, O, OH, OW) float32. Raises ValueError for shapes it does not take."""
    if x.dim() != 4 or weight.dim() != 4 or x.dtype != torch.float32 or weight.dtype != torch.float32 \
            or not x.is_cuda or weight.device != x.device or weight.shape[1] != x.shape[1]:
        raise ValueError(f"conv2d_cuda takes float32 CUDA x (N, C, H, W) and weight (O, C, KH, KW) on its device, "
                         f"got {x.dtype} {tuple(x.shape)} on {x.device} and {weight.dtype} {tuple(weight.shape)}")
    n, c, h, w = x.shape
    o = weight.shape[0]
    src, oh, ow = conv_source(c, h, w, o, tuple(weight.shape[2:]), tuple(stride), tuple(padding), tuple(dilation),
                              bias is not None)
    tiles = -(-oh * ow // 128)
    if n * tiles >= 2**31:
        raise ValueError(f"conv_small_k: {n} samples x {tiles} tiles exceed the grid")
    x, weight = x.contiguous(), weight.contiguous()
    b = weight if bias is None else bias.contiguous()
    y = torch.empty((n, o, oh, ow), device=x.device, dtype=torch.float32)
    if n:
        cuda_jit.run(src, "conv_small_k", (n * tiles, o // OUT_TILE), (THREADS,), "pppp", (x, weight, b, y),
                     x.device)
    return y


def last_dim_pointwise_2d(x: torch.Tensor, weight: torch.Tensor, stride, padding, dilation):
    """The 2-D view of a 3-D convolution whose kernel is 1 along the last dimension (see the module docstring):
    (x2d (N, C, A, B * D), weight2d (O, C, kA, kB), stride2d, padding2d, dilation2d), or None when the
    convolution is not of that kind."""
    if x.dim() != 5 or weight.dim() != 5 or weight.shape[4] != 1:
        return None
    (sa, sb, sd), (pa, pb, pd), (da, db, _) = stride, padding, dilation
    if sb != 1 or sd != 1 or pd != 0:
        return None
    n, c, a, bdim, d = x.shape
    return (x.reshape(n, c, a, bdim * d), weight[..., 0], (sa, 1), (pa, pb * d), (da, db * d))


def _kernel_or_torch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride, padding,
                     dilation) -> torch.Tensor:
    """The kernel for a 2-D convolution, or for a 3-D one through :func:`last_dim_pointwise_2d`; PyTorch for every
    other shape (:func:`conv_cuda.dispatch` has already checked dtypes, the group and CuPy)."""
    nd, _, _, s, p, d = geometry(x, tuple(weight.shape[2:]), stride, padding, dilation)
    try:
        if nd == 2:
            return conv2d_cuda(x, weight, bias, s[1:], p[1:], d[1:])
        view = last_dim_pointwise_2d(x.contiguous(), weight, s, p, d) if nd == 3 else None
        if view is not None:
            x2, w2, s2, p2, d2 = view
            y = conv2d_cuda(x2, w2, bias, s2, p2, d2)
            return y.view(x.shape[0], y.shape[1], y.shape[2], -1, x.shape[4])
    except ValueError:  # a shape the kernel does not take
        pass
    return _torch_conv(x)(x, weight, bias, stride, padding, dilation)


def conv(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0, dilation=1,
         groups: int = 1) -> torch.Tensor:
    """``torch.nn.functional.conv2d`` / ``conv3d`` (numeric padding): the CUDA kernel where it fits (see the module
    docstring; CuPy installed), PyTorch elsewhere (:func:`conv_cuda.dispatch`)."""
    return dispatch(_kernel_or_torch, x, weight, bias, stride, padding, dilation, groups)
