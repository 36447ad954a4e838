"""Max and average pooling (2-D and 3-D; any kernel, stride, padding, dilation; floor or ceil mode) as a direct
CUDA C kernel (NVRTC through CuPy, fp32): one thread per output, the window unrolled with every size compiled in,
outputs numbered with the last dimension fastest so that a warp's loads of one window tap fall on a few
neighbouring cache lines and the other taps hit them in L1; no index output. For the KernelBench level-1
``Max_Pooling_3D`` / ``Average_Pooling_2D`` solutions in ``kernelbench_v0``.

Why: eager ``nn.MaxPool3d`` runs ``max_pool3d_with_indices`` even without ``return_indices`` (an int64 index
written beside each value, window loops at run time), and ``avg_pool2d``'s kernel computes its window bounds at
run time per output. These kernels read each input about once from DRAM (the windows' overlaps come from L1/L2)
and write only the values.

The plane kernel (``method="planes"``, max pooling of (H, W) slices up to :data:`PLANE_MAX` values): one block per
(plane, output depth) folds the input depth slices its window takes into one max in shared memory (16-byte loads,
all issued before use), then reads the (row, column) taps from there: the direct kernel's 27 loads an output
through L1 bound it on KernelBench's 43_Max_Pooling_3D. Through the harness (eager baseline;
benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md) both kernels beat eager on 43 (3-D, k 3, s 2, d 3), the
plane kernel by more; the direct kernel was about level on 45 (2-D average, k 3, s 3) and lost on 42 (2-D max on a
34 MB input, a short reference call), not shipped. All calls launch through ``cuda_jit.run`` (the driver's
``cuLaunchKernel``).

The rows kernel (``method="rows"``, 2-D average pooling without padding or dilation): one block per (plane, RB
output rows) sums each output row's input rows column by column in shared memory (16-byte loads), then each output
adds KW column sums (rows first, then columns: not PyTorch's order). On 45 it was not clearly faster than eager
through the harness (within its noise) and level with the direct kernel in a probe
(benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md): 45 stays in ``pending/``.

Semantics, as PyTorch's CUDA kernels: max: padding reads nothing (it is not part of any window), a NaN in the
window gives NaN (``v > m || isnan(v)``), ties keep the first; average: the sum in window order (depth, row,
column), then one division by the count, which with ``count_include_pad`` is the window clipped to the padded
input (``min(start + k, size + pad) - start`` per dimension), else the window clipped to the input;
``divisor_override`` replaces the count. Output sizes follow ``torch.nn.functional``'s rule (ceil mode: a window
must start inside the input or its left padding).

x: (N, C, [D,] H, W) float32 CUDA, contiguous (made so); returns (N, C, [OD,] OH, OW) float32. Elsewhere (CPU,
other dtypes, no CuPy) :func:`max_pool` / :func:`avg_pool` call ``torch.nn.functional``.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from .. import cuda_jit
from ..kernel_specs import CudaSource

__all__ = ["PLANE_MAX", "ROWS_FLOAT4", "THREADS", "avg_pool", "max_pool", "pool_cuda", "pool_out_size", "pool_source",
           "rows_per_block"]

#: threads per block
THREADS = 256

_TEMPLATE = r"""
extern "C" __global__ void __launch_bounds__(256) pool_direct(const float* __restrict__ x, float* __restrict__ y,
                                                              long long total) {
    long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= total) return;
    const int ow = (int)(i % OW);
    long long t = i / OW;
    const int oh = (int)(t % OH);
    t /= OH;
    const int od = (int)(t % OD);
    const long long plane = t / OD;
    const float* xp = x + plane * ((long long)ID * IH * IW);
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
#if IS_MAX
    float acc = __int_as_float(0xff800000);  /* -inf */
#else
    float acc = 0.0f;
#endif
#pragma unroll
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DD;
        if (id < 0 || id >= ID) continue;
#pragma unroll
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DH;
            if (ih < 0 || ih >= IH) continue;
            const float* row = xp + ((long long)id * IH + ih) * IW;
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DW;
                if (iw < 0 || iw >= IW) continue;
                const float v = __ldg(row + iw);
#if IS_MAX
                if (v > acc || v != v) acc = v;
#else
                acc += v;
#endif
            }
        }
    }
#if IS_MAX
    y[i] = acc;
#else
#if DIVISOR > 0
    y[i] = acc / (float)DIVISOR;
#else
    int cd, ch, cw;
#if INCLUDE_PAD
    cd = min(d0 + KD, ID + PD) - d0;
    ch = min(h0 + KH, IH + PH) - h0;
    cw = min(w0 + KW, IW + PW) - w0;
#else
    cd = min(d0 + KD, ID) - max(d0, 0);
    ch = min(h0 + KH, IH) - max(h0, 0);
    cw = min(w0 + KW, IW) - max(w0, 0);
#endif
    y[i] = acc / (float)(cd * ch * cw);
#endif
#endif
}
"""


_PLANE_TEMPLATE = r"""
__device__ __forceinline__ float nan_max(float m, float v) { return (v > m || v != v) ? v : m; }

/* one block per (plane, od): the valid depth taps' (IH, IW) slices folded into one max in shared memory
   (16-byte loads, all issued before use), then the (kh, kw) taps read from there */
extern "C" __global__ void __launch_bounds__(256) max_pool3d_planes(const float* __restrict__ x,
                                                                    float* __restrict__ y) {
    __shared__ float m1[IH * IW];
    const int od = blockIdx.x % OD;
    const long long plane = blockIdx.x / OD;
    const float4* xp = reinterpret_cast<const float4*>(x + plane * ((long long)ID * IH * IW));
    const int d0 = od * SD - PD;
    constexpr int N4 = IH * IW / 4;
    constexpr int PER = (N4 + 255) / 256;
    float4 acc[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) acc[j] = make_float4(__int_as_float(0xff800000), __int_as_float(0xff800000),
                                                       __int_as_float(0xff800000), __int_as_float(0xff800000));
#pragma unroll
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DD;
        if (id < 0 || id >= ID) continue;
        float4 v[PER];
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            const int f = j * 256 + threadIdx.x;
            if (f < N4) v[j] = __ldg(xp + (long long)id * N4 + f);
        }
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            acc[j].x = nan_max(acc[j].x, v[j].x);
            acc[j].y = nan_max(acc[j].y, v[j].y);
            acc[j].z = nan_max(acc[j].z, v[j].z);
            acc[j].w = nan_max(acc[j].w, v[j].w);
        }
    }
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int f = j * 256 + threadIdx.x;
        if (f < N4) reinterpret_cast<float4*>(m1)[f] = acc[j];
    }
    __syncthreads();
    float* yp = y + (long long)blockIdx.x * (OH * OW);
    for (int o = threadIdx.x; o < OH * OW; o += 256) {
        const int oh = o / OW, ow = o % OW;
        const int h0 = oh * SH - PH, w0 = ow * SW - PW;
        float m = __int_as_float(0xff800000);
#pragma unroll
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DH;
            if (ih < 0 || ih >= IH) continue;
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DW;
                if (iw < 0 || iw >= IW) continue;
                m = nan_max(m, m1[ih * IW + iw]);
            }
        }
        yp[o] = m;
    }
}
"""

_ROWS_TEMPLATE = r"""
/* 2-D average pooling without padding or dilation: one block per (plane, RB output rows). The block sums the
   KH input rows of each of its output rows column by column (16-byte streaming loads, all issued before use)
   into shared memory, then each output sums KW neighbouring column sums and divides once. */
extern "C" __global__ void __launch_bounds__(256) avg_pool2d_rows(const float* __restrict__ x,
                                                                  float* __restrict__ y) {
    __shared__ __align__(16) float cs[RB * IW];
    constexpr int NRB = (OH + RB - 1) / RB;
    constexpr int W4 = IW / 4;
    constexpr int PER = (RB * W4 + 255) / 256;
    const int oh0 = (blockIdx.x % NRB) * RB;
    const long long plane = blockIdx.x / NRB;
    const float4* xp = reinterpret_cast<const float4*>(x + plane * ((long long)IH * IW));
    float4 v[PER][KH];
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int item = j * 256 + threadIdx.x;
        if (item < RB * W4 && oh0 + item / W4 < OH) {
            const int r = item / W4, f = item % W4;
#pragma unroll
            for (int kh = 0; kh < KH; ++kh) v[j][kh] = __ldcs(xp + ((oh0 + r) * SH + kh) * W4 + f);
        }
    }
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int item = j * 256 + threadIdx.x;
        if (item < RB * W4 && oh0 + item / W4 < OH) {
            float4 s = v[j][0];
#pragma unroll
            for (int kh = 1; kh < KH; ++kh) {
                s.x += v[j][kh].x; s.y += v[j][kh].y; s.z += v[j][kh].z; s.w += v[j][kh].w;
            }
            reinterpret_cast<float4*>(cs)[item] = s;
        }
    }
    __syncthreads();
    const int rows = min(RB, OH - oh0);
    float* yp = y + plane * (OH * OW) + (long long)oh0 * OW;
    for (int o = threadIdx.x; o < rows * OW; o += 256) {
        const float* c = cs + (o / OW) * IW + (o % OW) * SW;
        float s = c[0];
#pragma unroll
        for (int kw = 1; kw < KW; ++kw) s += c[kw];
        yp[o] = s / (float)(DIVISOR > 0 ? DIVISOR : KH * KW);
    }
}
"""

#: largest (H, W) slice the plane kernel stages in shared memory (floats)
PLANE_MAX = 12 * 1024
#: float4s of input rows the rows kernel's block stages (2 per thread): RB = ROWS_FLOAT4 * 4 // IW output rows
ROWS_FLOAT4 = 512


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's pooling output length of one dimension (``pooling_output_shape``)."""
    num = size + 2 * p - d * (k - 1) - 1
    out = (num + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _tuple(v, nd: int, name: str) -> tuple[int, ...]:
    t = tuple(int(e) for e in v) if isinstance(v, (tuple, list)) else (int(v),) * nd
    if len(t) == 1 and nd > 1:
        t = t * nd
    if len(t) != nd:
        raise ValueError(f"{name} needs 1 or {nd} values, got {v!r}")
    return t


def rows_per_block(out_h: int, in_w: int) -> int:
    """Output rows one block of the rows kernel computes: as many as ROWS_FLOAT4 float4s of input row hold."""
    return max(1, min(out_h, ROWS_FLOAT4 * 4 // in_w))


def _rows_fit(is_max: bool, spatial: tuple[int, ...], kernel: tuple[int, ...], padding: tuple[int, ...],
              dilation: tuple[int, ...], ceil: bool, stride: tuple[int, ...]) -> bool:
    """Whether the rows kernel takes this pool: 2-D average pooling without padding or dilation, floor output
    sizes, W % 4 == 0 and a row of at most ROWS_FLOAT4 * 4 values."""
    if is_max or spatial[0] != 1 or kernel[0] != 1 or any(padding) or any(d != 1 for d in dilation):
        return False
    dims = list(zip(spatial[1:], kernel[1:], stride[1:], strict=True))
    floor_out = [pool_out_size(i, k, s, 0, 1, False) for i, k, s in dims]
    ceil_out = [pool_out_size(i, k, s, 0, 1, ceil) for i, k, s in dims]
    return floor_out == ceil_out and spatial[2] % 4 == 0 and spatial[2] <= ROWS_FLOAT4 * 4


def _plane_fits(is_max: bool, spatial: tuple[int, ...]) -> bool:
    """Whether the plane kernel takes this pool: max pooling, an (H, W) slice of at most PLANE_MAX values, W % 4 == 0."""
    return is_max and spatial[1] * spatial[2] <= PLANE_MAX and spatial[2] % 4 == 0


@functools.lru_cache(maxsize=64)
def pool_source(is_max: bool, spatial: tuple[int, int, int], kernel: tuple[int, int, int],
                stride: tuple[int, int, int], padding: tuple[int, int, int], dilation: tuple[int, int, int],
                ceil: bool, include_pad: bool = True, divisor: int = 0,
                planes: bool = False, rows: bool = False) -> tuple[CudaSource, tuple[int, int, int]]:
    """The CUDA source for one shape (sizes, window, ``divisor`` > 0 for ``divisor_override``) and its output
    size (OD, OH, OW); a 2-D pool is a 3-D one with depth 1 and a window of depth 1. ``planes``: the source of
    the plane kernel (max pooling only) instead of the direct one; ``rows``: the rows kernel's (2-D average
    pooling without padding or dilation)."""
    out = tuple(pool_out_size(i, k, s, p, d, ceil)
                for i, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True))
    if min(out) <= 0:
        raise ValueError(f"pooling output size {out} is empty for input size {spatial}, kernel {kernel}")
    for k, p, d in zip(kernel, padding, dilation, strict=True):
        if p > (d * (k - 1) + 1) // 2 or p < 0:
            raise ValueError(f"padding {padding} must be at most half the (dilated) window {kernel}: PyTorch's rule")
    consts = dict(IS_MAX=int(is_max), ID=spatial[0], IH=spatial[1], IW=spatial[2], OD=out[0], OH=out[1], OW=out[2],
                  KD=kernel[0], KH=kernel[1], KW=kernel[2], SD=stride[0], SH=stride[1], SW=stride[2],
                  PD=padding[0], PH=padding[1], PW=padding[2], DD=dilation[0], DH=dilation[1], DW=dilation[2],
                  INCLUDE_PAD=int(include_pad), DIVISOR=int(divisor))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    name = "pool_direct_" + "_".join(str(v) for v in consts.values())
    if rows:
        if not _rows_fit(is_max, spatial, kernel, padding, dilation, ceil, stride):
            raise ValueError(f"the rows kernel takes 2-D average pooling without padding or dilation, floor output "
                             f"sizes and W % 4 == 0 (W <= {ROWS_FLOAT4 * 4}); got input {spatial}, kernel {kernel}, "
                             f"padding {padding}, dilation {dilation} ({'max' if is_max else 'avg'})")
        rb = rows_per_block(out[1], spatial[2])
        return CudaSource("pool_rows" + name[len("pool_direct"):], head + f"#define RB {rb}\n" + _ROWS_TEMPLATE,
                          ("avg_pool2d_rows",)), out  # type: ignore[return-value]
    if planes:
        if not _plane_fits(is_max, spatial):
            raise ValueError(f"the plane kernel takes max pooling of (H, W) slices of at most {PLANE_MAX} values with "
                             f"W % 4 == 0, got {spatial[1:]} ({'max' if is_max else 'avg'})")
        return CudaSource("pool_planes" + name[len("pool_direct"):], head + _PLANE_TEMPLATE,
                          ("max_pool3d_planes",)), out  # type: ignore[return-value]
    return CudaSource(name, head + _TEMPLATE, ("pool_direct",)), out  # type: ignore[return-value]


def pool_cuda(x: torch.Tensor, is_max: bool, kernel, stride=None, padding=0, dilation=1, ceil: bool = False,
              include_pad: bool = True, divisor: int | None = None, method: str = "direct") -> torch.Tensor:
    """The CUDA kernel, unconditionally, with ``torch.nn.functional.{max,avg}_pool{2,3}d``'s arguments (``stride``
    None: the kernel size; ``dilation`` only for max). x: (N, C, [D,] H, W) float32 CUDA. ``method``:
    ``"direct"`` (one thread per output), ``"planes"`` (max pooling: one block per (plane, output depth), the
    depth taps folded in shared memory first; for (H, W) slices of at most :data:`PLANE_MAX` values with
    W % 4 == 0, else the direct kernel) or ``"rows"`` (2-D average pooling without padding or dilation: one block
    per (plane, RB output rows), the window's rows summed column by column in shared memory first; else the direct
    kernel)."""
    if method not in ("direct", "planes", "rows"):
        raise ValueError(f"method must be 'direct', 'planes' or 'rows', got {method!r}")
    nd = x.dim() - 2
    if nd not in (2, 3) or x.dtype != torch.float32 or not x.is_cuda:
        raise ValueError(f"pool_cuda takes float32 CUDA (N, C, H, W) or (N, C, D, H, W), got {x.dtype} "
                         f"{tuple(x.shape)} on {x.device}")
    k = _tuple(kernel, nd, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _tuple(stride, nd,
                                                                                                       "stride")
    p, d = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")
    fill = (1,) * (3 - nd)
    x = x.contiguous()
    sp = fill + tuple(x.shape[2:])
    k3, s3, p3, d3 = fill + k, fill + s, (0,) * (3 - nd) + p, fill + d
    aligned = x.data_ptr() % 16 == 0
    planes = method == "planes" and _plane_fits(is_max, sp) and aligned  # else the direct kernel
    rows = method == "rows" and _rows_fit(is_max, sp, k3, p3, d3, bool(ceil), s3) and aligned
    src, out = pool_source(is_max, sp, k3, s3, p3, d3, bool(ceil), bool(include_pad), int(divisor or 0), planes, rows)
    y = torch.empty(tuple(x.shape[:2]) + out[3 - nd:], device=x.device, dtype=torch.float32)
    total = y.numel()
    if not total:
        return y
    if rows:
        nrb = -(-out[1] // rows_per_block(out[1], sp[2]))
        cuda_jit.run(src, "avg_pool2d_rows", (x.shape[0] * x.shape[1] * nrb,), (THREADS,), "pp", (x, y), x.device)
    elif planes:
        cuda_jit.run(src, "max_pool3d_planes", (x.shape[0] * x.shape[1] * out[0],), (THREADS,), "pp", (x, y),
                     x.device)
    else:
        cuda_jit.run(src, "pool_direct", (-(-total // THREADS),), (THREADS,), "ppl", (x, y, total), x.device)
    return y


def _usable(x: torch.Tensor) -> bool:
    return x.is_cuda and x.dtype == torch.float32 and x.dim() in (4, 5) and cuda_jit.cupy_available()


def max_pool(x: torch.Tensor, kernel, stride=None, padding=0, dilation=1, ceil: bool = False,
             method: str = "direct") -> torch.Tensor:
    """``torch.nn.functional.max_pool{2,3}d`` values (no indices): the CUDA kernel ``method`` (see
    :func:`pool_cuda`) for float32 CUDA inputs (CuPy installed), PyTorch elsewhere."""
    if _usable(x):
        return pool_cuda(x, True, kernel, stride, padding, dilation, ceil, method=method)
    fn = F.max_pool2d if x.dim() == 4 else F.max_pool3d
    return fn(x, kernel, stride, padding, dilation, ceil)


def avg_pool(x: torch.Tensor, kernel, stride=None, padding=0, ceil: bool = False, count_include_pad: bool = True,
             divisor_override: int | None = None, method: str = "direct") -> torch.Tensor:
    """``torch.nn.functional.avg_pool{2,3}d``: the CUDA kernel ``method`` (``"direct"`` or ``"rows"``, see
    :func:`pool_cuda`) for float32 CUDA inputs (CuPy installed), PyTorch elsewhere."""
    if _usable(x):
        return pool_cuda(x, False, kernel, stride, padding, 1, ceil, count_include_pad, divisor_override, method)
    fn = F.avg_pool2d if x.dim() == 4 else F.avg_pool3d
    return fn(x, kernel, stride, padding, ceil, count_include_pad, divisor_override)
