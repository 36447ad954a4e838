"""Sum over one dimension: ``y = sum_r x[..., r, ...]``.

Shapes: ``x`` any shape, float32 (fp16/bf16 accumulated in fp32); ``dim`` any (negative counts from the
end); output ``x.shape`` without ``dim`` (kept as 1 with ``keepdim``), ``x``'s dtype. Memory-bound: one
read of the input (4 bytes per fp32 element), no transpose: a last dimension is reduced along contiguous
rows, a middle one with tiles coalesced along the contiguous inner dimension (see :mod:`._reduce`).

Backward (every device): ``dx = dy`` broadcast back over ``dim``, an expanded view as torch's own VJP: no kernel
could do better than not writing the R-times larger tensor (``_rows_backward.expand_backward``).
"""

from __future__ import annotations

import torch

from ._reduce import MID_CONFIGS, ROW_CONFIGS, reduce_kernels, reduce_op
from ._rows_backward import REDUCE_BACKWARDS

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "sum_dim", "sum_dim_launch", "sum_dim_ref"]


def sum_dim_ref(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """PyTorch reference."""
    return torch.sum(x, dim=dim, keepdim=keepdim)


#: ``sum_dim_launch(x, dim, keepdim=False, row_config=None, mid_config=None)`` runs the Triton kernels (the
#: interpreter included); ``sum_dim(x, dim, keepdim=False)`` is the public op: sum of ``x`` over ``dim``,
#: shape ``x.shape`` without ``dim`` (1 with ``keepdim``), ``x``'s dtype; Triton on CUDA, the reference on CPU;
#: ``torch.ops.cudal1.sum_dim`` under ``torch.compile``.
sum_dim_launch, sum_dim = reduce_op("sum", sum_dim_ref, REDUCE_BACKWARDS["sum"])

#: for ``python -m cudal1.kernelzoo.compile_targets`` (the shared kernels of ``_reduce``)
TRITON_KERNELS = reduce_kernels("sum")
