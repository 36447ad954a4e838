"""``torch.triu(a @ b)`` / ``torch.tril(a @ b)`` computing only the blocks the triangle needs (about half the
GEMM's FLOPs), for any square ``a``, ``b`` (nothing is assumed about the inputs: every kept element is a full
length-N dot product, as in the plain product).

The triangle is cut recursively into full blocks, each computed by cuBLAS straight into its place in the output:
a diagonal block of size s is its two diagonal halves (recursion) plus the full (s/2, s/2) off-diagonal block
(right of the first half for the upper triangle, below it for the lower). All blocks of one level have one shape
and a fixed stride between them, so each level is ONE strided-batched GEMM (``torch.bmm`` with ``out=`` an
``as_strided`` view of the output: no copies). Up to :data:`MAX_LEVELS` halvings (while the block stays even and
at least :data:`MIN_LEAF`), then the diagonal leaves are computed whole and one in-place ``triu_``/``tril_``
writes the zeros. At N = 4096: 53% of the product's FLOPs in five GEMM launches (KernelBench level-1 tasks 14
and 15: faster than eager, benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md).

Forward only (``bmm`` with ``out=`` has no gradient): inputs that require grad raise
:class:`~cudal1.kernelzoo.registry.NoGradientError`. Any floating dtype and device; the precision is the
backend's for ``bmm`` (no TF32 unless the caller enabled it).
"""

from __future__ import annotations

import torch

from .registry import NoGradientError

__all__ = ["MAX_LEVELS", "MIN_LEAF", "triangular_matmul"]

MAX_LEVELS = 4  # recursion depth; leaves of N / 16 (256 at N = 4096)
MIN_LEAF = 16


def _levels(n: int) -> int:
    """How many halvings of the N x N diagonal block are used (each needs even sizes)."""
    levels = 0
    while levels < MAX_LEVELS and n % (2 ** (levels + 1)) == 0 and n // 2 ** (levels + 1) >= MIN_LEAF:
        levels += 1
    return levels


def triangular_matmul(a: torch.Tensor, b: torch.Tensor, upper: bool) -> torch.Tensor:
    """``torch.triu(a @ b)`` (``upper``) or ``torch.tril(a @ b)`` for square ``a``, ``b`` (N, N) of one dtype and
    device; a new contiguous (N, N) tensor. ValueError for other shapes, NoGradientError under autograd."""
    if a.dim() != 2 or a.shape[0] != a.shape[1] or b.shape != a.shape or a.dtype != b.dtype:
        raise ValueError(f"triangular_matmul takes two square matrices of one shape and dtype, got "
                         f"{tuple(a.shape)} {a.dtype} and {tuple(b.shape)} {b.dtype}")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        raise NoGradientError("triangular_matmul has no gradient: use torch.triu(a @ b) to train through it, or "
                              "call it under torch.no_grad()")
    n = a.shape[0]
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty((n, n), device=a.device, dtype=a.dtype)
    levels = _levels(n)
    for level in range(levels):  # level L: 2^L diagonal blocks of size s, each with one off-diagonal half block
        count, s = 2 ** level, n >> level
        h = s // 2
        if upper:  # rows j*s .. j*s+h times columns j*s+h .. (j+1)*s
            a_rows, b_cols, o_off = a.as_strided((count, h, n), (s * n, n, 1), 0), b.as_strided(
                (count, n, h), (s, n, 1), h), h
        else:  # rows j*s+h .. (j+1)*s times columns j*s .. j*s+h
            a_rows, b_cols, o_off = a.as_strided((count, h, n), (s * n, n, 1), h * n), b.as_strided(
                (count, n, h), (s, n, 1), 0), h * n
        torch.bmm(a_rows, b_cols, out=out.as_strided((count, h, h), (s * n + s, n, 1), o_off))
    count, s = 2 ** levels, n >> levels  # the diagonal leaves, computed whole
    torch.bmm(a.as_strided((count, s, n), (s * n, n, 1), 0), b.as_strided((count, n, s), (s, n, 1), 0),
              out=out.as_strided((count, s, s), (s * n + s, n, 1), 0))
    return out.triu_() if upper else out.tril_()
