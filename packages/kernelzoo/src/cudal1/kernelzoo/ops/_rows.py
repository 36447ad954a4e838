"""Tiling of row-wise ops (log_softmax, l2_normalize) over the last dimension of a contiguous (rows, N) view.

Rows with ``N <= MAX_N`` are kept whole in registers: one program loads a (BLOCK_M, BLOCK_N) tile
(``BLOCK_N = next_pow2(N)``, several short rows per program so each moves at least ``MIN_TILE`` elements),
reduces it and writes the result: one read and one write per element. Longer rows fall back to a looped
kernel that reads the row twice (statistics, then output).
"""

from __future__ import annotations

from .._triton import triton

__all__ = ["row_tile"]


def row_tile(n_rows: int, n_cols: int, cfg: dict) -> dict[str, int] | None:
    """``{"BLOCK_M", "BLOCK_N", "num_warps"}`` (launch keywords) for the one-read path, or None when a row exceeds ``cfg["MAX_N"]``.

    ``cfg`` keys: ``MAX_N`` (longest row kept in registers), ``MIN_TILE`` (elements per program at least,
    rows permitting), ``EPT`` (target elements per thread), ``MAX_WARPS``.
    """
    block_n = triton.next_power_of_2(max(n_cols, 1))
    if block_n > cfg["MAX_N"]:
        return None
    block_m = min(triton.next_power_of_2(max(n_rows, 1)), max(1, cfg["MIN_TILE"] // block_n))
    warps = (block_m * block_n) // (32 * cfg["EPT"])
    warps = min(max(triton.next_power_of_2(max(warps, 1)), 1), cfg["MAX_WARPS"])
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps}
