"""KernelBench level 1, 15_Matmul_for_lower_triangular_matrices (A, B: (4096, 4096) fp32,
``torch.tril(torch.matmul(A, B))``).

The forward itself zeroes everything above the diagonal of the product, so only the lower triangle needs
computing: about half the GEMM's FLOPs. This holds for every A and B (nothing here assumes the inputs are
triangular; every kept element is a full length-K dot product, as in the reference). The lower triangle is
cut recursively into full blocks, each computed by cuBLAS fp32 straight into its place in the output: a
diagonal block of size s is its two diagonal halves (recursion) plus the full (s/2, s/2) block below the
first half. All blocks of one level have the same shape and a fixed stride between them, so each level is
ONE strided-batched cuBLAS call (``torch.bmm`` with ``out=`` an ``as_strided`` view of the output: no
copies). At N = 4096: four levels (one 2048^2 block, two 1024^2, four 512^2, eight 256^2) and sixteen 256^2
diagonal leaves computed whole; then one in-place ``tril_`` writes the zeros above the diagonal. That is 53%
of the reference's 137 GFLOP in five GEMM launches plus the ``tril_`` (which writes only the zeroed half).

Expected ~1.6x against eager (2.8 ms for the GEMM and tril on an H100 in the 2026-11-24 self-run): 53% of
the FLOPs, with the small levels (about 10% of the reference's FLOPs) running below full-GEMM efficiency.
Measured through the harness on an H100 (2026-11-25, eager baseline): 1.55x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md).
"""

import torch
import torch.nn as nn

MAX_LEVELS = 4  # recursion depth; leaves of N / 16 (256 at N = 4096)
MIN_LEAF = 16


def _levels(n: int) -> int:
    """How many halvings of the N x N diagonal block are used (each needs even sizes)."""
    levels = 0
    while levels < MAX_LEVELS and n % (2 ** (levels + 1)) == 0 and n // 2 ** (levels + 1) >= MIN_LEAF:
        levels += 1
    return levels


def tril_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.tril(a @ b)`` for square a, b (N, N) fp32, computing only the blocks the triangle needs."""
    n, k = a.shape
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty((n, n), device=a.device, dtype=a.dtype)
    levels = _levels(n)
    for level in range(levels):  # level L: 2^L diagonal blocks of size s, each with its lower-left half block
        count, s = 2 ** level, n >> level
        h = s // 2
        a_rows = a.as_strided((count, h, k), (s * k, k, 1), h * k)  # rows j*s+h .. (j+1)*s
        b_cols = b.as_strided((count, k, h), (s, n, 1), 0)  # columns j*s .. j*s+h
        torch.bmm(a_rows, b_cols, out=out.as_strided((count, h, h), (s * n + s, n, 1), h * n))
    count, s = 2 ** levels, n >> levels  # the diagonal leaves, computed whole
    torch.bmm(a.as_strided((count, s, k), (s * k, k, 1), 0), b.as_strided((count, k, s), (s, n, 1), 0),
              out=out.as_strided((count, s, s), (s * n + s, n, 1), 0))
    return out.tril_()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tril_matmul(A, B)
