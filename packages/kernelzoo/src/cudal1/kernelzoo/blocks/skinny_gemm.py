"""The small-K fp32 GEMM ``C = A @ B`` (K <= 64), bound by writing C, not by arithmetic, for KernelBench level 1's
``7_Matmul_with_small_K_dimension_`` and ``9_Tall_skinny_matrix_multiplication_`` (solutions in
``kernelbench_v0``).

:func:`small_k_matmul`: a (M, K) @ b (K, N) -> (M, N), fp32, 1 <= K <= :data:`MAX_K`. Cost is writing C (4 M N bytes;
1.07 GB at 16384x16384, bound by DRAM bandwidth) and 2 M N K FLOP of fp32 FMA that can run while the stores drain. A
program owns one BLOCK_M x BLOCK_N output tile; K goes in BLOCK_K = 16 steps, unrolled (two at K = 32; no loop, so
``num_stages`` changes nothing there), each one ``tl.dot(..., input_precision="ieee")`` (fp32 products and sums, no
reduced-precision tensor cores) of a (BLOCK_M, 16) slice of A and a (16, BLOCK_N) slice of B, read from L2 (A and B
are 2 MB each at the task sizes); the tile is then stored once with ``evict_first`` stores, so C's lines do not push A
and B out of L2. The Triton kernel runs for fp32 CUDA tensors (:func:`small_k_matmul_triton` runs it unconditionally:
CUDA, or CPU under ``TRITON_INTERPRET=1``), ``torch.matmul`` elsewhere (:func:`small_k_matmul_ref`). Launch configs
are per input shape in :data:`GEMM_CONFIGS` (:data:`GEMM_DEFAULT` otherwise);
``benchmarks/probes/probe_skinny_gemm.py`` times candidates on a GPU.

In that probe (host time with a cold L2 against eager ``torch.matmul``; the probe, not the harness;
benchmarks/results/2026-11-26-kernelbench-v0-release-h100/call13-probe-skinny-gemm.txt; figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md) the smallest tile tried won, 64x64 with 4 warps,
faster than eager at K = 32 and more so at K = 16; 128x128 with 8 warps capped at 128 registers gained less on
both, persistent grids little or nothing.

Through the harness (eager baseline) neither verified faster than eager: both of 7's runs had confidence intervals
that took in eager's time; 9 was rejected ``reference_drift``
(benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md). Both were timed with ``cudaMalloc`` inside the paired
calls (see ``cudal1.harness.allocator``). Both tasks now ship :mod:`.skinny_gemm_cuda` (CUDA C, faster than eager on
both; benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md); this kernel stays the fallback for shapes that
one does not take.

A split-K GEMV for ``4_Matrix_vector_multiplication_`` (256x131072) was tried and removed: it lost to eager at
every config (its kernel alone was slower than cuBLAS's in CUDA-event time; same results file).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton

__all__ = ["GEMM_CONFIGS", "GEMM_DEFAULT", "MAX_K", "small_k_matmul", "small_k_matmul_ref", "small_k_matmul_triton"]

MAX_K = 64  #: larger K goes to ``torch.matmul`` (cuBLAS): the kernel keeps no pipeline over K

#: launch configs by (M, N, K): output tile BLOCK_M x BLOCK_N, K in BLOCK_K steps (unrolled up to MAX_K; an fp32
#: ``tl.dot`` needs BLOCK_K >= 16), num_warps, num_stages. Both task shapes: the probe's winner (see above).
GEMM_CONFIGS: dict[tuple[int, int, int], dict[str, int]] = {
    (16384, 16384, 32): {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "num_warps": 4, "num_stages": 1},
    (16384, 16384, 16): {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "num_warps": 4, "num_stages": 1},
}
#: other shapes: the same tile (the winner at both measured K)
GEMM_DEFAULT: dict[str, int] = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "num_warps": 4, "num_stages": 1}


@triton.jit
def _gemm_step(a_ptrs, b_ptrs, acc, k, rk, K, EVEN_K: tl.constexpr):
    """acc + a[:, k:k+BLOCK_K] @ b[k:k+BLOCK_K, :] (fp32 FMA; ``a_ptrs`` / ``b_ptrs`` point at column / row k;
    columns / rows past K read as 0)."""
    if EVEN_K:
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
    else:
        a = tl.load(a_ptrs, mask=(k + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptrs, mask=(k + rk)[:, None] < K, other=0.0)
    return tl.dot(a, b, acc, input_precision="ieee")


@triton.jit
def _small_k_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         UNROLL_K: tl.constexpr, EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr):
    """c (M, N) = a (M, K) @ b (K, N), c contiguous; one output tile per program (row-major tile order). K in
    BLOCK_K steps, unrolled up to UNROLL_K (UNROLL_K == 0: a loop over K), then one store of the tile."""
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    # rows / columns past the edge read row / column (index mod size): in bounds, their outputs are not stored
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M).to(tl.int64)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N).to(tl.int64)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + ram[:, None] * s_am + rk[None, :] * s_ak
    b_ptrs = b_ptr + rk[:, None] * s_bk + rbn[None, :] * s_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if UNROLL_K > 0:
        for k in tl.static_range(0, UNROLL_K, BLOCK_K):
            acc = _gemm_step(a_ptrs, b_ptrs, acc, k, rk, K, EVEN_K)
            a_ptrs += BLOCK_K * s_ak
            b_ptrs += BLOCK_K * s_bk
    else:
        for k in range(0, K, BLOCK_K):
            acc = _gemm_step(a_ptrs, b_ptrs, acc, k, rk, K, EVEN_K)
            a_ptrs += BLOCK_K * s_ak
            b_ptrs += BLOCK_K * s_bk
    c_ptrs = c_ptr + rm.to(tl.int64)[:, None] * s_cm + rn[None, :]
    # evict_first: C's lines (written once) should not push A and B (read by every tile) out of L2
    if EVEN_MN:
        tl.store(c_ptrs, acc, eviction_policy="evict_first")
    else:
        tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N), eviction_policy="evict_first")


def small_k_matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.matmul(a, b)``: the reference and the fallback."""
    return torch.matmul(a, b)


def small_k_matmul_triton(a: torch.Tensor, b: torch.Tensor, config: dict[str, int] | None = None) -> torch.Tensor:
    """The Triton kernel, unconditionally (CUDA, or CPU tensors under ``TRITON_INTERPRET=1``).

    a: (M, K) fp32, b: (K, N) fp32, any strides and any K (K > :data:`MAX_K` runs, but slower than cuBLAS) ->
    (M, N) fp32 contiguous. ``config`` (keys as in :data:`GEMM_CONFIGS`): default the shape's entry there, else
    :data:`GEMM_DEFAULT`."""
    m, k = a.shape
    n = b.shape[1]
    cfg = config or GEMM_CONFIGS.get((m, n, k), GEMM_DEFAULT)
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    if m == 0 or n == 0:
        return c
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    _small_k_gemm_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, UNROLL_K=triton.cdiv(k, bk) * bk if k <= MAX_K else 0,
        EVEN_K=k % bk == 0, EVEN_MN=m % bm == 0 and n % bn == 0,
        num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return c


def small_k_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for a (M, K) and b (K, N) -> (M, N): the Triton kernel for fp32 CUDA matrices with
    1 <= K <= :data:`MAX_K`, ``torch.matmul`` otherwise (CPU, other dtypes or ranks, larger K; the same math)."""
    if (a.is_cuda and a.dtype == torch.float32 and b.dtype == torch.float32 and a.dim() == 2 and b.dim() == 2
            and 1 <= a.shape[1] <= MAX_K and a.shape[1] == b.shape[0]):
        return small_k_matmul_triton(a, b)
    return small_k_matmul_ref(a, b)
