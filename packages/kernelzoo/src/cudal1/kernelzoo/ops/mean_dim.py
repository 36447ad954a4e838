"""Mean over one dimension: ``y = sum_r x[..., r, ...] / R (fp32 sum, one division)``.

Shapes: ``x`` any shape, float32 (fp16/bf16 accumulated in fp32); ``dim`` any (negative counts from the
end); output ``x.shape`` without ``dim`` (kept as 1 with ``keepdim``), ``x``'s dtype. Memory-bound: one
read of the input (4 bytes per fp32 element), no transpose: a last dimension is reduced along contiguous
rows, a middle one with tiles coalesced along the contiguous inner dimension (see :mod:`._reduce`).

Backward (every device): ``dx = dy / R`` broadcast back over ``dim``: the division on the small ``dy``, then an
expanded view; no kernel could do better than not writing the R-times larger tensor
(``_rows_backward.expand_backward``; torch's VJP divides after expanding, a full write).
"""

from __future__ import annotations

import torch

from ._reduce import MID_CONFIGS, ROW_CONFIGS, reduce_kernels, reduce_op
from ._rows_backward import REDUCE_BACKWARDS

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "mean_dim", "mean_dim_launch", "mean_dim_ref"]


def mean_dim_ref(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """PyTorch reference."""
    return torch.mean(x, dim=dim, keepdim=keepdim)


#: ``mean_dim_launch(x, dim, keepdim=False, row_config=None, mid_config=None)`` runs the Triton kernels (the
#: interpreter included); ``mean_dim(x, dim, keepdim=False)`` is the public op: mean of ``x`` over ``dim``,
#: shape ``x.shape`` without ``dim`` (1 with ``keepdim``), ``x``'s dtype; Triton on CUDA, the reference on CPU;
#: ``torch.ops.cudal1.mean_dim`` under ``torch.compile``.
mean_dim_launch, mean_dim = reduce_op("mean", mean_dim_ref, REDUCE_BACKWARDS["mean"])

#: for ``python -m cudal1.kernelzoo.compile_targets`` (the shared kernels of ``_reduce``)
TRITON_KERNELS = reduce_kernels("mean")
