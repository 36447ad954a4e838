"""KernelBench level 1, 7_Matmul_with_small_K_dimension_ (A: (16384, 32), B: (32, 16384) fp32 -> C (16384, 16384)):
a rank-32 product whose cost is writing C (1.07 GB, ~0.36 ms at the H100's copy bandwidth) and 17.2 GFLOP of
fp32 FMA (~0.26 ms at the SIMT peak), which can overlap. cuBLAS runs its SIMT kernel with 64 x 64 tiles
(``sm80_xmma_gemm_f32f32..._tilesize64x64x8_stage3``): with K = 32 each tile is all prologue and epilogue, and the
call measured 0.758 ms (22.7 TFLOP/s, 1.4 TB/s of stores; benchmarks/results/2026-11-24-kb-selfrun-before-h100.md).

Here one Triton kernel with 128 x 128 output tiles and the whole K in one step: each program loads its A rows
(128 x 32) and B columns (32 x 128) once (A and B are 2 MB each and stay in L2), forms the tile with Triton's
fp32 FMA dot (``input_precision="ieee"``: exact fp32 products, fp32 sums, no TF32) and writes it with wide
stores, ``evict_first`` so that C does not push A and B out of L2. Sums of K = 32 terms agree with cuBLAS to
fp32 rounding. Expected about 1.3-1.6x (C's writes and the FMA work overlapped, fewer and larger tiles).
Not yet measured on a GPU."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _small_k_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rm_ld = tl.where(rm < M, rm, 0)  # clamped rows/cols load in bounds; the store is masked
    rn_ld = tl.where(rn < N, rn, 0)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm_ld[:, None] * stride_am + rk[None, :] * stride_ak, mask=rk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn_ld[None, :] * stride_bn, mask=rk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c_ptrs = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N), eviction_policy="evict_first")


def small_k_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a`` (M, K) @ ``b`` (K, N), fp32, for small K: one pass writing C."""
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    bk = max(16, min(64, triton.next_power_of_2(k)))
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
    _small_k_mm_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                             BLOCK_M=128, BLOCK_N=128, BLOCK_K=bk, GROUP_M=8, num_warps=8, num_stages=2)
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if not (A.is_cuda and A.dtype == torch.float32 and B.dtype == torch.float32 and A.dim() == 2
                and B.dim() == 2 and A.shape[1] == B.shape[0] and A.shape[1] <= 128 and A.numel() > 0
                and B.numel() > 0):
            return torch.mm(A, B)  # CPU / large K / other shapes: the same product through torch
        return small_k_matmul(A, B)
