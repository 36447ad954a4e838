"""A tensor divided by its Frobenius norm in CUDA C (NVRTC through CuPy, fp32), for the KernelBench level-1
``37_FrobeniusNorm_`` solution in ``kernelbench_v0``: DRAM-bound passes written so that enough 16-byte loads are
in flight to run near the copy rate (every thread issues all its loads before it uses one; streaming cache hints
on data read or written once).

:func:`frobenius_normalize` ``x / sqrt(sum(x * x))``: one launch sums the squares (grid-stride, per-block
partials; the block that arrives last, behind ``__threadfence`` and an arrival counter, sums the partials in a
fixed order, stores the norm on the device and resets the counter: no host synchronisation, no memset), a second
divides (a true division, as eager) and walks the tensor from its end, whose last ~50 MB the first pass has just left
in L2. It beat eager through the harness and in a probe
(``benchmarks/results/2026-11-27-kernelbench-v0-level1-h100/``).

The same call measured, and lost, a split-row GEMV for ``4_Matrix_vector_multiplication_`` (slower than cuBLAS)
and a scale-by-scalar kernel for ``5_Matrix_scalar_multiplication`` (slower than eager's vectorised elementwise
kernel); both were removed (figures: benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md).

Inputs: float32 CUDA tensors, contiguous, 16-byte aligned, with a multiple of 4 elements (else, and on CPU or
without CuPy, the PyTorch expression runs).

:func:`batch_norm_eval` (``33_BatchNorm``): eval-mode batch normalisation with the running statistics, ``(x -
mean[c]) * (weight[c] / sqrt(var[c] + eps)) + bias[c]`` in one pass, one block per 256 * UNROLL float4s of one (n,
c) plane, loads issued before the block reads its channel's four parameters (L2 hits after the first block of the
channel). Nothing is cached between calls: the parameters and buffers are read at each call. Eager runs cuDNN's
inference kernel, which moves its 268 MB in and out more slowly than eager's own scale-by-scalar kernel moves the
same bytes. It beat eager through the harness, and a probe timed 2, 4 or 8 float4s a thread alike
(benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md). Planes whose size is not a multiple of 1024 *
UNROLL values, other dtypes and CPU tensors take ``torch.nn.functional.batch_norm``."""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from .. import cuda_jit
from ..fast_launch import ReductionScratch
from ..kernel_specs import CudaSource

__all__ = ["NORM_BLOCKS", "UNROLL", "batch_norm_eval", "bn_source", "frobenius_normalize", "norm_source"]

#: float4s each thread moves per step
UNROLL = 4
#: blocks of the sum-of-squares pass (a few per SM)
NORM_BLOCKS = 1056

_SCRATCH = ReductionScratch(parts=8192)

_BLOCK_SUM = r"""
__device__ __forceinline__ float block_sum(float v, float* smem) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    float t = 0.0f;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int w = 0; w < 8; ++w) t += smem[w];
    }
    return t;  /* valid in thread 0 */
}

/* thread 0 stores its block's partial and takes a ticket; true in every thread of the block that arrived last */
__device__ __forceinline__ bool arrive_last(float total, float* part, int slot, int* counter, int blocks) {
    __shared__ bool last;
    if (threadIdx.x == 0) {
        part[slot] = total;
        __threadfence();
        last = atomicAdd(counter, 1) == blocks - 1;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}
"""

_NORM = r"""
extern "C" __global__ void __launch_bounds__(256) sumsq_norm(const float4* __restrict__ x, long long n4,
                                                             float* part, int* counter, float* norm) {
    __shared__ float smem[8];
    const long long stride = (long long)gridDim.x * (256 * U);
    float acc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = 0.0f;
    for (long long base = (long long)blockIdx.x * (256 * U) + threadIdx.x; base < n4; base += stride) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = base + u * 256;
            v[u] = i < n4 ? __ldg(x + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            acc[u] = fmaf(v[u].x, v[u].x, acc[u]);
            acc[u] = fmaf(v[u].y, v[u].y, acc[u]);
            acc[u] = fmaf(v[u].z, v[u].z, acc[u]);
            acc[u] = fmaf(v[u].w, v[u].w, acc[u]);
        }
    }
    float a = 0.0f;
#pragma unroll
    for (int u = 0; u < U; ++u) a += acc[u];
    const float total = block_sum(a, smem);
    if (!arrive_last(total, part, blockIdx.x, counter, gridDim.x)) return;
    /* the last block: thread t sums partials t, t + 256, ... then a fixed tree over the 256 threads */
    float t = 0.0f;
    for (int q = threadIdx.x; q < gridDim.x; q += 256) t += __ldcg(part + q);
    __syncthreads();
    const float sum = block_sum(t, smem);
    if (threadIdx.x == 0) {
        norm[0] = sqrtf(sum);
        *counter = 0;
    }
}

extern "C" __global__ void __launch_bounds__(256) div_by_norm(const float4* __restrict__ x, float4* __restrict__ y,
                                                              const float* __restrict__ norm, long long n4) {
    /* blocks walk the tensor from its end: the first pass left the end in L2 */
    const long long base = (long long)(gridDim.x - 1 - blockIdx.x) * (256 * U) + threadIdx.x;
    const float d = __ldg(norm);
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long i = base + u * 256;
        if (i < n4) v[u] = __ldcs(x + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long i = base + u * 256;
        if (i < n4) {
            float4 r = v[u];
            r.x = r.x / d; r.y = r.y / d; r.z = r.z / d; r.w = r.w / d;
            __stcs(y + i, r);
        }
    }
}
"""


@functools.lru_cache(maxsize=8)
def norm_source(unroll: int) -> CudaSource:
    """Frobenius-normalisation source (sum-of-squares pass and divide pass), ``unroll`` float4s per thread."""
    return CudaSource(f"frobenius_{unroll}", f"#define U {unroll}\n" + _BLOCK_SUM + _NORM,
                      ("sumsq_norm", "div_by_norm"))


def _streamable(t: torch.Tensor) -> bool:
    return (t.is_cuda and t.dtype == torch.float32 and t.is_contiguous() and t.data_ptr() % 16 == 0
            and t.numel() % 4 == 0 and cuda_jit.cupy_available())


def frobenius_normalize(x: torch.Tensor, unroll: int = UNROLL, blocks: int = NORM_BLOCKS) -> torch.Tensor:
    """``x / torch.norm(x, p="fro")`` (the norm over every element) for a float32 tensor."""
    if not (_streamable(x) and x.numel() and blocks <= _SCRATCH.parts):
        return x / torch.norm(x, p="fro")
    n4 = x.numel() // 4
    part, counter = _SCRATCH.get(x)
    norm = torch.empty(1, device=x.device, dtype=torch.float32)
    y = torch.empty_like(x)
    src = norm_source(unroll)
    cuda_jit.run(src, "sumsq_norm", (blocks,), (256,), "plppp", (x, n4, part, counter, norm), x.device)
    cuda_jit.run(src, "div_by_norm", (-(-n4 // (256 * unroll)),), (256,), "pppl", (x, y, norm, n4), x.device)
    return y


_BN = r"""
extern "C" __global__ void __launch_bounds__(256) bn_eval(const float4* __restrict__ x, float4* __restrict__ y,
                                                          const float* __restrict__ mean,
                                                          const float* __restrict__ var,
                                                          const float* __restrict__ weight,
                                                          const float* __restrict__ bias, float eps, int channels,
                                                          int blocks_per_plane) {
    /* one block: 256 * U float4s of one (n, c) plane (the plane holds blocks_per_plane such runs) */
    const long long base = (long long)blockIdx.x * (256 * U) + threadIdx.x;
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(x + base + u * 256);
    const int c = (int)((blockIdx.x / blocks_per_plane) % channels);
    const float scale = weight[c] / sqrtf(var[c] + eps);
    const float m = mean[c], shift = bias[c];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        float4 r;
        r.x = fmaf(v[u].x - m, scale, shift);
        r.y = fmaf(v[u].y - m, scale, shift);
        r.z = fmaf(v[u].z - m, scale, shift);
        r.w = fmaf(v[u].w - m, scale, shift);
        __stcs(y + base + u * 256, r);
    }
}
"""


@functools.lru_cache(maxsize=8)
def bn_source(unroll: int) -> CudaSource:
    """Eval-mode batch-norm source, ``unroll`` float4s per thread."""
    return CudaSource(f"bn_eval_{unroll}", f"#define U {unroll}\n" + _BN, ("bn_eval",))


def batch_norm_eval(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor, weight: torch.Tensor,
                    bias: torch.Tensor, eps: float, unroll: int = UNROLL) -> torch.Tensor:
    """``F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)``.

    x: (N, C, *spatial) float32; the four (C,) float32 tensors on x's device. The CUDA kernel when x is
    streamable (see the module docstring) with a plane size that is a multiple of 1024 * ``unroll`` and every
    parameter contiguous float32 on x's device; PyTorch elsewhere."""
    params = (running_mean, running_var, weight, bias)
    if x.dim() < 2 or any(p is None for p in params):
        return F.batch_norm(x, running_mean, running_var, weight, bias, False, 0.0, eps)
    n, c = x.shape[0], x.shape[1]
    plane = x.numel() // max(n * c, 1)
    run = 1024 * unroll
    if not (_streamable(x) and x.numel() and plane % run == 0 and n * c * (plane // run) < 2**31
            and all(p.dtype == torch.float32 and p.device == x.device and p.is_contiguous() and p.numel() == c
                    for p in params)):
        return F.batch_norm(x, running_mean, running_var, weight, bias, False, 0.0, eps)
    y = torch.empty_like(x)
    per_plane = plane // run
    cuda_jit.run(bn_source(unroll), "bn_eval", (n * c * per_plane,), (256,), "ppppppfii",
                 (x, y, running_mean, running_var, weight, bias, float(eps), c, per_plane), x.device)
    return y
