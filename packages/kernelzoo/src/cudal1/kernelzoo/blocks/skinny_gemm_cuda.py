"""The small-K fp32 GEMM ``C = A @ B`` as a CUDA C kernel (NVRTC through CuPy, launched through the driver), for
KernelBench level 1's ``7_Matmul_with_small_K_dimension_`` (K = 32) and ``9_Tall_skinny_matrix_multiplication_``
(K = 16), both (16384, K) @ (K, 16384).

Cost: writing C (4 M N bytes, 1.07 GB at the task sizes, bound by DRAM bandwidth) and M N K fp32 FMAs (8.6 G at
K = 32, a little less time than the write at the GPU's FP32 rate; figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md) that can run while other blocks' stores drain. Eager is
cuBLAS's SIMT SGEMM (TF32 off). The Triton kernel of :mod:`.skinny_gemm` (fp32 ``tl.dot``) was barely faster than
eager through the harness on K = 32 (benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md).

Kernel: one block of 256 threads per (16 TM) x 128 output tile (TM = 4 or 8 rows a thread). The block reads its A
rows (contiguous: the whole K of each row) into shared memory transposed and its B columns as float4 rows, then each
thread keeps a TM x 8 accumulator (rows ``h * 64 + 4 ty + i``, columns ``64 j + 4 tx + q``: float4 shared-memory
reads without bank conflicts, and float4 stores of which a warp writes two 256-byte row segments) and runs K fp32
FMAs per output in k order (``fmaf``, products and sums in fp32, as an SGEMM does; no tensor cores). The tile is
stored with streaming stores (``__stcs``), so C's lines leave L2 first and A and B (2 MB each, read by every block)
stay.

:func:`small_k_matmul_cuda` runs it for float32 CUDA matrices with 4 <= K <= :data:`MAX_K`, M a multiple of the
tile's rows and N of 128, both contiguous and 16-byte aligned, K a multiple of 4; :func:`small_k_matmul` falls back
to :func:`.skinny_gemm.small_k_matmul` (Triton, then ``torch.matmul``) for everything else.
"""

from __future__ import annotations

import functools

import torch

from .. import cuda_jit
from ..kernel_specs import CudaSource
from .skinny_gemm import small_k_matmul as small_k_matmul_fallback

__all__ = ["MAX_K", "TILE_N", "THREADS", "gemm_source", "small_k_matmul", "small_k_matmul_cuda", "tile_m"]

MAX_K = 32  #: both operand tiles fit the 48 KB of static shared memory: (16 TM + 4 + 128) K 4 bytes, 33 KB at TM 8
TILE_N = 128  #: output columns per block
THREADS = 256  #: 16 x 16 threads

#: rows a thread computes, per K (the tile is 16 * TM rows). Both task shapes: 4 (a 64 x 128 tile, ~80 registers,
#: three blocks a multiprocessor): in a probe on an H100 (2026-11-27) it beat TM 8 (127 registers, two blocks) by
#: 2% at K = 32 and 6% at K = 16 (benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100/)
TM_BY_K: dict[int, int] = {16: 4, 32: 4}
TM_DEFAULT = 4

_SOURCE = r"""
/* C (M, N) = A (M, K) @ B (K, N), fp32; K, TM compile-time; M % (16 TM) == 0, N % 128 == 0, K % 4 == 0 */
#define BM (16 * TM)
#define BN 128
extern "C" __global__ void __launch_bounds__(256, 2) small_k_gemm(const float* __restrict__ a,
                                                                  const float* __restrict__ b,
                                                                  float* __restrict__ c, int n) {
    __shared__ __align__(16) float as[K][BM + 4];  /* A tile transposed: as[k][row] */
    __shared__ __align__(16) float bs[K][BN];
    const int tid = threadIdx.x;
    const int tiles_n = n / BN;
    const long long bm = blockIdx.x / tiles_n;
    const int bn = blockIdx.x % tiles_n;
    const float4* ap = reinterpret_cast<const float4*>(a + bm * BM * K);
#pragma unroll
    for (int f = tid; f < BM * K / 4; f += 256) {
        const float4 v = __ldg(ap + f);
        const int r = f / (K / 4), k = (f % (K / 4)) * 4;
        as[k][r] = v.x;
        as[k + 1][r] = v.y;
        as[k + 2][r] = v.z;
        as[k + 3][r] = v.w;
    }
#pragma unroll
    for (int f = tid; f < K * BN / 4; f += 256) {
        const int k = f / (BN / 4), q = f % (BN / 4);
        reinterpret_cast<float4*>(&bs[k][0])[q] =
            __ldg(reinterpret_cast<const float4*>(b + (long long)k * n + bn * BN) + q);
    }
    __syncthreads();
    const int tx = tid & 15, ty = tid >> 4;
    float acc[TM][8];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        float ar[TM], br[8];
#pragma unroll
        for (int h = 0; h < TM / 4; ++h) {
            const float4 v = reinterpret_cast<const float4*>(&as[k][h * 64])[ty];
            ar[4 * h] = v.x; ar[4 * h + 1] = v.y; ar[4 * h + 2] = v.z; ar[4 * h + 3] = v.w;
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float4 v = reinterpret_cast<const float4*>(&bs[k][h * 64])[tx];
            br[4 * h] = v.x; br[4 * h + 1] = v.y; br[4 * h + 2] = v.z; br[4 * h + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    float* cp = c + bm * BM * (long long)n + bn * BN;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = (i / 4) * 64 + ty * 4 + (i % 4);
        float4* rp = reinterpret_cast<float4*>(cp + (long long)row * n);
        __stcs(rp + tx, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        __stcs(rp + 16 + tx, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}
"""


def tile_m(k: int) -> int:
    """Rows a thread computes for this K (4 or 8; the block's tile is 16 times that)."""
    return TM_BY_K.get(k, TM_DEFAULT)


@functools.lru_cache(maxsize=32)
def gemm_source(k: int, tm: int) -> CudaSource:
    """The kernel's source for one K (a multiple of 4, at most :data:`MAX_K`) and TM (4 or 8)."""
    if not (1 <= k <= MAX_K and k % 4 == 0):
        raise ValueError(f"K must be a multiple of 4 in [4, {MAX_K}], got {k}")
    if tm not in (4, 8):
        raise ValueError(f"TM (rows per thread) must be 4 or 8, got {tm}")
    return CudaSource(f"small_k_gemm_k{k}_tm{tm}", f"#define K {k}\n#define TM {tm}\n" + _SOURCE, ("small_k_gemm",))


def _fits(a: torch.Tensor, b: torch.Tensor, tm: int) -> bool:
    m, k = a.shape
    n = b.shape[1]
    return (a.is_cuda and b.is_cuda and a.dtype == torch.float32 and b.dtype == torch.float32
            and a.is_contiguous() and b.is_contiguous() and a.data_ptr() % 16 == 0 and b.data_ptr() % 16 == 0
            and k == b.shape[0] and 4 <= k <= MAX_K and k % 4 == 0 and m % (16 * tm) == 0 and n % TILE_N == 0
            and m > 0 and n > 0 and (m // (16 * tm)) * (n // TILE_N) < 2**31 and n < 2**31)


def small_k_matmul_cuda(a: torch.Tensor, b: torch.Tensor, tm: int | None = None) -> torch.Tensor:
    """The CUDA kernel, unconditionally. a: (M, K), b: (K, N) float32 CUDA, contiguous and 16-byte aligned,
    K % 4 == 0 and K <= :data:`MAX_K`, M % (16 tm) == 0, N % 128 == 0 -> (M, N) float32. ``tm``: rows per thread
    (4 or 8; default :func:`tile_m`)."""
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"small_k_matmul_cuda takes two matrices, got {tuple(a.shape)} and {tuple(b.shape)}")
    tm = tile_m(a.shape[1]) if tm is None else tm
    if not _fits(a, b, tm):
        raise ValueError(f"small_k_matmul_cuda needs float32 CUDA contiguous (M, K) @ (K, N) with K % 4 == 0, "
                         f"K <= {MAX_K}, M % {16 * tm} == 0, N % {TILE_N} == 0; got {tuple(a.shape)} "
                         f"{a.dtype} @ {tuple(b.shape)} {b.dtype} on {a.device}")
    return _launch(a, b, tm)


def _launch(a: torch.Tensor, b: torch.Tensor, tm: int) -> torch.Tensor:
    """The launch, for operands :func:`_fits` has accepted with this ``tm``."""
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    grid = ((m // (16 * tm)) * (n // TILE_N),)
    cuda_jit.run(gemm_source(k, tm), "small_k_gemm", grid, (THREADS,), "pppi", (a, b, c, n), a.device)
    return c


def small_k_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for a (M, K) and b (K, N): the CUDA kernel where it fits (see :func:`small_k_matmul_cuda`; CuPy
    installed), else :func:`.skinny_gemm.small_k_matmul` (Triton for small K on CUDA, ``torch.matmul``
    elsewhere)."""
    if a.dim() == 2 and b.dim() == 2 and a.shape[1] >= 1:
        tm = tile_m(a.shape[1])
        if _fits(a, b, tm) and cuda_jit.cupy_available():
            return _launch(a, b, tm)
    return small_k_matmul_fallback(a, b)
