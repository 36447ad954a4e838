"""CUDA C shared by the row ops (softmax, layer_norm, rms_norm) and their launcher: one block per row of a
contiguous (rows, N) float32 view, warp-shuffle + shared-memory block reductions.

A row of up to ``ROW_REGS * blockDim.x`` floats is kept whole in registers (``ROW_REGS`` per thread): one
read and one write per element. With ``vec`` (N % 4 == 0 and every pointer 16-byte aligned) thread t holds
the float4s t, t + blockDim.x, ...; otherwise the floats t, t + blockDim.x, .... Longer rows are streamed
from global memory (read again for each pass; L2 keeps some of it).

Kernel signature of every row op: ``(x, *weights, y, int n, *float scalars, int vec)``.
"""

from __future__ import annotations

import torch

from .. import cuda_jit
from .._triton import triton
from ..kernel_specs import CudaSource

__all__ = ["ROW_COMMON", "ROW_REGS", "row_launch_cuda", "row_threads"]

#: floats per thread kept in registers (ZOO_ROW_REGS in ROW_COMMON)
ROW_REGS = 32

ROW_COMMON = r"""
#define ZOO_ROW_VEC 8                    // float4s per thread kept in registers
#define ZOO_ROW_REGS (4 * ZOO_ROW_VEC)   // floats per thread kept in registers (ROW_REGS)
#define ZOO_NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ float zoo_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float zoo_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum / max over the block, returned to every thread. blockDim.x is a multiple of 32; smem holds 32 floats.
__device__ __forceinline__ float zoo_block_sum(float v, float* smem) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = zoo_warp_sum(v);
    __syncthreads();  // a previous reduction may still be reading smem
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    return zoo_warp_sum(lane < warps ? smem[lane] : 0.0f);
}

__device__ __forceinline__ float zoo_block_max(float v, float* smem) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = zoo_warp_max(v);
    __syncthreads();
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    return zoo_warp_max(lane < warps ? smem[lane] : ZOO_NEG_INF);
}

// Column held in register slot k of this thread.
__device__ __forceinline__ int zoo_row_col(int k, int vec) {
    return vec ? 4 * ((int)threadIdx.x + (k >> 2) * (int)blockDim.x) + (k & 3) : (int)threadIdx.x + k * (int)blockDim.x;
}

// r[k] = row[zoo_row_col(k)] for columns < n, fill elsewhere.
__device__ __forceinline__ void zoo_row_load(const float* __restrict__ row, int n, int vec, float (&r)[ZOO_ROW_REGS],
                                             float fill) {
    if (vec) {
        const float4* __restrict__ row4 = reinterpret_cast<const float4*>(row);
#pragma unroll
        for (int k = 0; k < ZOO_ROW_VEC; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            const float4 q = j < (n >> 2) ? row4[j] : make_float4(fill, fill, fill, fill);
            r[4 * k] = q.x;
            r[4 * k + 1] = q.y;
            r[4 * k + 2] = q.z;
            r[4 * k + 3] = q.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            r[k] = j < n ? row[j] : fill;
        }
    }
}

// row[zoo_row_col(k)] = r[k] for columns < n.
__device__ __forceinline__ void zoo_row_store(float* __restrict__ row, int n, int vec, const float (&r)[ZOO_ROW_REGS]) {
    if (vec) {
        float4* __restrict__ row4 = reinterpret_cast<float4*>(row);
#pragma unroll
        for (int k = 0; k < ZOO_ROW_VEC; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            if (j < (n >> 2)) row4[j] = make_float4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            if (j < n) row[j] = r[k];
        }
    }
}

// row[c] = (r - mean) * rstd * w[c] + b[c] (b may be null: + 0) for the columns c < n held in r.
__device__ __forceinline__ void zoo_row_affine_store(float* __restrict__ row, int n, int vec,
                                                     const float (&r)[ZOO_ROW_REGS], float mean, float rstd,
                                                     const float* __restrict__ w, const float* __restrict__ b) {
    if (vec) {
        float4* __restrict__ row4 = reinterpret_cast<float4*>(row);
        const float4* __restrict__ w4 = reinterpret_cast<const float4*>(w);
        const float4* __restrict__ b4 = reinterpret_cast<const float4*>(b);
#pragma unroll
        for (int k = 0; k < ZOO_ROW_VEC; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            if (j < (n >> 2)) {
                const float4 wv = w4[j];
                const float4 bv = b ? b4[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                row4[j] = make_float4((r[4 * k] - mean) * rstd * wv.x + bv.x, (r[4 * k + 1] - mean) * rstd * wv.y + bv.y,
                                      (r[4 * k + 2] - mean) * rstd * wv.z + bv.z, (r[4 * k + 3] - mean) * rstd * wv.w + bv.w);
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) {
            const int j = threadIdx.x + k * blockDim.x;
            if (j < n) row[j] = (r[k] - mean) * rstd * w[j] + (b ? b[j] : 0.0f);
        }
    }
}
"""


def row_threads(n_cols: int, cfg: dict) -> int:
    """Threads per block for rows of ``n_cols``: about ``cuda_cols_per_thread`` columns each (a power of two,
    32 to ``cuda_max_threads``), so rows up to ``ROW_REGS * cuda_max_threads`` stay in registers."""
    per, most = int(cfg["cuda_cols_per_thread"]), int(cfg["cuda_max_threads"])
    if not 1 <= per <= ROW_REGS:
        raise ValueError(f"cuda_cols_per_thread must be in [1, {ROW_REGS}], got {per}")
    if most not in (32, 64, 128, 256, 512, 1024):
        raise ValueError(f"cuda_max_threads must be a power of two in [32, 1024], got {most}")
    return min(most, max(32, triton.next_power_of_2(triton.cdiv(n_cols, per))))


def row_launch_cuda(source: CudaSource, x: torch.Tensor, weights: tuple[torch.Tensor, ...], scalars: tuple[float, ...],
                    cfg: dict) -> torch.Tensor:
    """Run the row kernel of ``source`` on ``x`` (..., N): ``kernel(x, *weights, y, N, *scalars, vec)`` with one
    block per row; float32 CUDA tensors; output contiguous, like ``x``."""
    for t in (x, *weights):
        if t.dtype != torch.float32:
            raise TypeError(f"the CUDA C kernel {source.kernels[0]} takes float32, got {t.dtype}")
    xc = x.contiguous()
    ws = tuple(w.contiguous() for w in weights)
    y = torch.empty_like(xc)
    n = xc.shape[-1] if xc.dim() else 1
    rows = xc.numel() // max(n, 1)
    if n >= 2**31 or rows >= 2**31:
        raise ValueError(f"rows ({rows}) and row length ({n}) must each be below 2**31 for the CUDA C kernel")
    if xc.numel():
        vec = n % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in (xc, *ws, y))
        args = (xc, *ws, y, cuda_jit.i32(n), *map(cuda_jit.f32, scalars), cuda_jit.i32(vec))
        cuda_jit.launch(source, source.kernels[0], (rows,), (row_threads(n, cfg),), args, xc.device)
    return y
