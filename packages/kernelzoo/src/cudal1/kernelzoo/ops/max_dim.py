"""Maximum (values only, as torch.amax; NaN propagates) over one dimension: ``y = max_r x[..., r, ...]``.

Shapes: ``x`` any shape, float32 (fp16/bf16 accumulated in fp32); ``dim`` any (negative counts from the
end); output ``x.shape`` without ``dim`` (kept as 1 with ``keepdim``), ``x``'s dtype. Memory-bound: one
read of the input (4 bytes per fp32 element), no transpose: a last dimension is reduced along contiguous
rows, a middle one with tiles coalesced along the contiguous inner dimension (see :mod:`._reduce`).

Backward (CUDA, fp32/bf16/fp16; ``_rows_backward.max_backward_launch``): torch.amax's rule, ``dx = dy / count``
at every maximum of its slice (ties share evenly), 0 elsewhere, NaN over a slice holding a NaN; the maximum and
its count recomputed from ``x`` by one kernel that then writes ``dx`` (last dimension: rows up to MAX_N in
registers, one read; a middle dimension: two passes down R). The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from ._reduce import MID_CONFIGS, ROW_CONFIGS, reduce_kernels, reduce_op
from ._rows_backward import CONFIGS as ROWS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import REDUCE_BACKWARDS
from ._rows_backward import TILE_CONFIGS as ROWS_BWD_TILE_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import kernels as backward_kernels

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "max_dim", "max_dim_launch", "max_dim_ref"]


def max_dim_ref(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """PyTorch reference."""
    return torch.amax(x, dim=dim, keepdim=keepdim)


#: ``max_dim_launch(x, dim, keepdim=False, row_config=None, mid_config=None)`` runs the Triton kernels (the
#: interpreter included); ``max_dim(x, dim, keepdim=False)`` is the public op: maximum of ``x`` over ``dim``,
#: shape ``x.shape`` without ``dim`` (1 with ``keepdim``), ``x``'s dtype; Triton on CUDA, the reference on CPU;
#: ``torch.ops.cudal1.max_dim`` under ``torch.compile``.
max_dim_launch, max_dim = reduce_op("max", max_dim_ref, REDUCE_BACKWARDS["max"])

#: for ``python -m cudal1.kernelzoo.compile_targets`` (the shared kernels of ``_reduce``)
TRITON_KERNELS = reduce_kernels("max") + backward_kernels("max_dim")
