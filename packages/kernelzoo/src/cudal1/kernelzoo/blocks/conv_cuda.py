"""Standard convolution (1-D, 2-D, 3-D; any stride, padding, dilation; one group; optional bias) with few input
channels as a register-tiled direct convolution in CUDA C (NVRTC through CuPy, fp32 FMA, no TF32), for the
KernelBench level-1 ``conv_standard_*`` / ``conv_pointwise`` / ``conv_depthwise_separable`` solutions in
``kernelbench_v0``.

Why not cuDNN or an implicit GEMM: KernelBench's standard convolutions have 3 input channels. cuDNN's fp32 kernels
(TF32 off) run them far below the GPU's fp32 rate, and a Triton implicit GEMM over the flattened (channel, tap) axis
(``tl.dot(..., input_precision="ieee")``) did not do much better (``benchmarks/results/
2026-11-26-kernelbench-v0-release-h100/call12-probe-conv-gemm.txt``): its FMA dot stages every operand through
shared memory. Here each thread keeps its operands in registers:

* a block has 8 warps; warp ``w`` owns output channels ``64 b + 8 w .. + 7`` (``b`` = ``blockIdx.y``), and lane
  ``l`` owns ``WT`` consecutive output positions of one output row (``slot`` = ``32 blockIdx.x + l``, a slot is
  one (sample, depth, row, chunk of ``WT`` columns));
* the block's weights are staged once in shared memory as ``[tap][64 channels]`` (a warp reads its 8 channels
  as two broadcast ``float4``), and for a depthwise-separable pair the product ``pw[co, ci] * dw[ci, tap]`` is
  formed while staging;
* per (input channel, kernel depth, kernel row) a thread loads the input window its ``WT`` positions need for all
  ``KW`` column taps once (``(WT - 1) * SW + (KW - 1) * DW + 1`` values, zero outside the input: padding) and
  does ``KW * WT * 8`` FMAs from registers.

Through the harness (call 14 of the kernelbench-v0 release results:
benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md; figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md) it beat cuDNN clearly on 66 and 60 (3x5x7 kernels)
and narrowly on 54 (3x3x3); it lost on the 2-D and 1-D tasks (55, 56, 62, 63, 80, 86, 87; 59; 67 and 76 by the
most), where there are 3-45 multiply-adds per output and the kernel is bound by its input-window loads and stores,
which cuDNN does better.

Shapes, strides and kernel sizes are compiled in (one NVRTC build per shape, cached by CuPy on disk). Launched
through ``cuda_jit.run`` (the driver's ``cuLaunchKernel``); the results above went through CuPy's launch path, which
costs more host time a call (``blocks.pool_cuda``'s measurement). :mod:`.conv_rows_cuda` is
the same register tiling with the input rows staged in shared memory, for the 2-D shapes.
Elsewhere (CPU, other dtypes, several groups, no CuPy) :func:`conv` runs ``torch.nn.functional.conv{1,2,3}d``.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from .. import cuda_jit
from ..kernel_specs import CudaSource

__all__ = ["check_one_group", "conv", "conv_cuda", "conv_source", "dispatch", "geometry", "separable_bias",
           "separable_conv", "torch_separable", "usable"]

_TEMPLATE = r"""
#define KT (CIN * KD * KH * KW)
#define WIN ((WT - 1) * SW + (KW - 1) * DW + 1)
extern "C" __global__ void __launch_bounds__(256, 2)
conv_direct(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ dw,
            const float* __restrict__ bias, float* __restrict__ y, long long nslots)
{
    extern __shared__ float4 ws4[];
    float* ws = (float*)ws4;  // [KT][64]
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
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long slot = (long long)blockIdx.x * 32 + lane;
    const bool live = slot < nslots;
    const int chunk = (int)(slot % CPR);
    long long r = slot / CPR;
    const int oh = (int)(r % OH);
    r /= OH;
    const int od = (int)(r % OD);
    const long long n = r / OD;
    const int ow0 = chunk * WT;
    float acc[8][WT];
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
        for (int j = 0; j < WT; ++j) acc[c][j] = 0.f;
    const float* xn = x + n * (long long)CIN * ID * IH * IW;
#pragma unroll 1
    for (int ci = 0; ci < CIN; ++ci) {
#pragma unroll 1
        for (int kd = 0; kd < KD; ++kd) {
            const int id = od * SD - PD + kd * DD;
            const bool okd = live && id >= 0 && id < ID;
#pragma unroll
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * SH - PH + kh * DH;
                const bool ok = okd && ih >= 0 && ih < IH;
                const float* xr = xn + ((long long)(ci * ID + id) * IH + ih) * IW;
                float win[WIN];
#pragma unroll
                for (int t = 0; t < WIN; ++t) {
                    const int iw = ow0 * SW - PW + t;
                    win[t] = (ok && iw >= 0 && iw < IW) ? __ldg(xr + iw) : 0.f;
                }
#pragma unroll
                for (int kw = 0; kw < KW; ++kw) {
                    const int kk = ((ci * KD + kd) * KH + kh) * KW + kw;
                    const float4 wa = ws4[kk * 16 + warp * 2];
                    const float4 wb = ws4[kk * 16 + warp * 2 + 1];
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
    }
    // epilogue through shared memory, one channel at a time: a thread's WT consecutive outputs go in as float4s,
    // then lane l writes positions l, l + 32, ...: each warp store is contiguous along the output row
    float* buf = ws + KT * 64 + warp * (32 * WT);
    float* dst[WT];
    bool keep[WT];
#pragma unroll
    for (int k = 0; k < WT; ++k) {
        const int p = k * 32 + lane;
        const long long s2 = (long long)blockIdx.x * 32 + p / WT;
        const int ow = (int)(s2 % CPR) * WT + p % WT;
        long long r2 = s2 / CPR;
        const int oh2 = (int)(r2 % OH);
        r2 /= OH;
        const int od2 = (int)(r2 % OD);
        const long long n2 = r2 / OD;
        keep[k] = s2 < nslots && ow < OW;
        dst[k] = y + ((n2 * COUT * OD + od2) * (long long)OH + oh2) * OW + ow;
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) {
        const int co = co0 + warp * 8 + c;
#if HAS_BIAS
        const float b = co < COUT ? bias[co] : 0.f;
#else
        const float b = 0.f;
#endif
#pragma unroll
        for (int j = 0; j < WT; j += 4)
            *(float4*)&buf[lane * WT + j] = make_float4(acc[c][j] + b, acc[c][j + 1] + b, acc[c][j + 2] + b,
                                                        acc[c][j + 3] + b);
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


def _torch_conv(x: torch.Tensor):
    """``torch.nn.functional.conv{1,2,3}d`` by the input's rank (the path off the CUDA kernel)."""
    return {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.dim()]


def _triple(v, nd: int, fill: int) -> tuple[int, int, int]:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    if len(t) != nd:
        raise ValueError(f"expected {nd} values (one per spatial dimension), got {t}")
    return (fill,) * (3 - nd) + t  # type: ignore[return-value]


@functools.lru_cache(maxsize=64)
def conv_source(cin: int, cout: int, spatial: tuple[int, int, int], kernel: tuple[int, int, int],
                stride: tuple[int, int, int], padding: tuple[int, int, int], dilation: tuple[int, int, int],
                factor: bool, has_bias: bool) -> tuple[CudaSource, tuple[int, int, int], int]:
    """The CUDA source for one shape (everything compiled in), its output size (OD, OH, OW) and ``WT``."""
    out = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                for i, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True))
    if min(out) <= 0:
        raise ValueError(f"convolution output size {out} is empty for input size {spatial}, kernel {kernel}")
    waste = {t: -(-out[2] // t) * t - out[2] for t in (4, 8)}  # padded columns per row
    wt = 4 if waste[8] > 0.15 * out[2] and waste[4] < waste[8] else 8
    consts = dict(CIN=cin, COUT=cout, ID=spatial[0], IH=spatial[1], IW=spatial[2], OD=out[0], OH=out[1], OW=out[2],
                  KD=kernel[0], KH=kernel[1], KW=kernel[2], SD=stride[0], SH=stride[1], SW=stride[2],
                  PD=padding[0], PH=padding[1], PW=padding[2], DD=dilation[0], DH=dilation[1], DW=dilation[2],
                  WT=wt, CPR=-(-out[2] // wt), FACTOR=int(factor), HAS_BIAS=int(has_bias))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    name = "conv_direct_" + "_".join(str(v) for v in consts.values())
    return CudaSource(name, head + _TEMPLATE, ("conv_direct",)), out, wt  # type: ignore[return-value]


def geometry(x: torch.Tensor, kernel: tuple[int, ...], stride, padding, dilation) -> tuple[int, tuple, tuple,
                                                                                         tuple, tuple, tuple]:
    """``(nd, spatial, kernel, stride, padding, dilation)`` of a 1-3-D convolution, each padded to three
    dimensions with leading unit sizes (the CUDA kernels see every input as 3-D)."""
    nd = x.dim() - 2
    if len(kernel) != nd:
        raise ValueError(f"a {nd}-D input needs a {nd}-D kernel, got kernel size {kernel}")
    pad = (1,) * (3 - nd)
    return (nd, pad + tuple(x.shape[2:]), pad + tuple(kernel), _triple(stride, nd, 1), _triple(padding, nd, 0),
            _triple(dilation, nd, 1))


def check_one_group(x: torch.Tensor, weight: torch.Tensor) -> None:
    """Refuse a grouped weight (the CUDA kernels take one group)."""
    if weight.shape[1] != x.shape[1]:
        raise ValueError(f"weight {tuple(weight.shape)} is for {weight.shape[1]} input channels, x has "
                         f"{x.shape[1]} (grouped convolutions are not handled here: use F.conv*d)")


def dispatch(kernel_fn, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride, padding,
             dilation, groups: int) -> torch.Tensor:
    """``kernel_fn(x, weight, bias, stride, padding, dilation)`` for one-group fp32 CUDA tensors (CuPy installed),
    ``torch.nn.functional.conv{1,2,3}d`` elsewhere (same math)."""
    if groups == 1 and isinstance(padding, (int, tuple, list)) and usable(x, weight, bias):
        return kernel_fn(x, weight, bias, stride, padding, dilation)
    return _torch_conv(x)(x, weight, bias, stride, padding, dilation, groups)


def _launch(x: torch.Tensor, w: torch.Tensor, dw: torch.Tensor | None, bias: torch.Tensor | None,
            kernel: tuple[int, ...], cout: int, stride, padding, dilation) -> torch.Tensor:
    nd, sp, ks, s, p, d = geometry(x, kernel, stride, padding, dilation)
    n, cin = x.shape[:2]
    src, out, wt = conv_source(cin, cout, sp, ks, s, p, d, dw is not None, bias is not None)
    y = torch.empty((n, cout) + out[3 - nd:], device=x.device, dtype=torch.float32)
    nslots = n * out[0] * out[1] * -(-out[2] // wt)
    smem = (cin * ks[0] * ks[1] * ks[2] * 64 + 8 * 32 * wt) * 4
    grid = (-(-nslots // 32), -(-cout // 64))
    args = (x, w, dw if dw is not None else w, bias if bias is not None else w, y, nslots)
    cuda_jit.run(src, "conv_direct", grid, (256,), "pppppl", args, x.device, shared_mem=smem)
    return y


def usable(x: torch.Tensor, *params: torch.Tensor | None) -> bool:
    """Whether the CUDA kernel takes these tensors: fp32 CUDA, 1-3 spatial dims, CuPy installed."""
    return (x.is_cuda and x.dtype == torch.float32 and 3 <= x.dim() <= 5 and cuda_jit.cupy_available()
            and all(t is None or t.dtype == torch.float32 for t in params))


def conv_cuda(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
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
    return dispatch(conv_cuda, x, weight, bias, stride, padding, dilation, groups)


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


def torch_separable(x: torch.Tensor, dw: torch.Tensor, dw_bias: torch.Tensor | None, pw: torch.Tensor,
                    pw_bias: torch.Tensor | None, stride=1, padding=0, dilation=1) -> torch.Tensor:
    """The depthwise-separable pair as PyTorch's two convolutions (the path off the CUDA kernels)."""
    fn = _torch_conv(x)
    return fn(fn(x, dw, dw_bias, stride, padding, dilation, x.shape[1]), pw, pw_bias)


def separable_bias(x: torch.Tensor, dw: torch.Tensor, dw_bias: torch.Tensor | None, pw: torch.Tensor,
                   pw_bias: torch.Tensor | None) -> torch.Tensor | None:
    """Check a depthwise-separable pair's shapes and return the bias of the folded convolution,
    ``pw @ dw_bias + pw_bias`` (None when neither has a bias)."""
    cin, cout = x.shape[1], pw.shape[0]
    if dw.shape[0] != cin or dw.shape[1] != 1 or pw.shape[1] != cin or any(k != 1 for k in pw.shape[2:]):
        raise ValueError(f"separable_conv needs dw (Cin, 1, *kernel) and pw (Cout, Cin, 1, ...) for Cin = {cin}, "
                         f"got {tuple(dw.shape)} and {tuple(pw.shape)}")
    if dw_bias is None:
        return pw_bias
    fold = pw.reshape(cout, cin) @ dw_bias
    return fold if pw_bias is None else fold + pw_bias
