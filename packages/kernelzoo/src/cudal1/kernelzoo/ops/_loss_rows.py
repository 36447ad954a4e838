"""Shared pieces of the per-sample loss ops (mse, smooth L1, KL, cross-entropy, cosine embedding, triplet):
one launch-config table, input validation, and the row-block choice. Each loss is one program per row
reading its inputs once (fused elementwise term + fp32 row reduction) and writing one fp32 value per row.
"""

from __future__ import annotations

import torch

from .._triton import triton
from ..arch import check_table, pick

#: BLOCK columns per loop step of one row's program; rows of the suite are 2048-32768 floats wide.
CONFIGS = {
    "sm80": {"BLOCK": 2048, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 4096, "num_warps": 8},
}
check_table(CONFIGS, "loss_rows")


def config_for(x: torch.Tensor, config: dict | None) -> dict:
    """The launch config: ``config`` if given, else the table entry of ``x``'s device family."""
    return config or pick(CONFIGS, x.device if x.is_cuda else None)


def row_block(cfg: dict, n_cols: int) -> int:
    """Columns per loop step: the config's BLOCK, shrunk to the row width (power of two, at least 16)."""
    return max(16, min(cfg["BLOCK"], triton.next_power_of_2(max(n_cols, 1))))


def check_rows(op: str, *tensors: torch.Tensor, min_dim: int = 1) -> None:
    """Same shape, float32/float16/bfloat16, one device, at least ``min_dim`` dims: else ``ValueError``
    naming ``op`` and the offending shapes/dtypes."""
    first = tensors[0]
    for t in tensors:
        if t.shape != first.shape:
            raise ValueError(f"{op}: inputs must have the same shape, got {[tuple(u.shape) for u in tensors]}")
        if not t.dtype.is_floating_point:
            raise ValueError(f"{op}: inputs must be floating point, got {[u.dtype for u in tensors]}")
        if t.device != first.device:
            raise ValueError(f"{op}: inputs must be on one device, got {[str(u.device) for u in tensors]}")
    if first.dim() < min_dim:
        raise ValueError(f"{op}: inputs need at least {min_dim} dim(s), got shape {tuple(first.shape)}")


def rows_out(x: torch.Tensor) -> torch.Tensor:
    """The fp32-or-input-dtype output of a per-row loss of ``x`` (..., D): shape (...)."""
    return torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
