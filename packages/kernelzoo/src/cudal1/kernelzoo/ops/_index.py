"""Range checks of index tensors (token ids, class targets) before a kernel reads memory by them: a GPU kernel
cannot raise, so an id past the table would read another row (or past the allocation) and return garbage."""

from __future__ import annotations

import torch

__all__ = ["check_index_range"]


def check_index_range(op: str, what: str, index: torch.Tensor, high: int, ignore_index: int | None = None) -> None:
    """Raise ValueError when an entry of ``index`` lies outside ``[0, high)`` and is not ``ignore_index``.
    One reduction and one device sync on CUDA (the price of an error instead of garbage)."""
    if index.numel() == 0:
        return
    bad = (index < 0) | (index >= high)
    if ignore_index is not None:
        bad &= index != ignore_index
    if bool(bad.any()):
        pos = tuple(int(i) for i in bad.nonzero()[0])
        tail = f" and is not ignore_index ({ignore_index})" if ignore_index is not None else ""
        raise ValueError(f"{op}: {what}{list(pos)} = {int(index[pos])} is outside [0, {high}){tail}")
