"""Mean over one dimension: ``y = sum_r x[..., r, ...] / R (fp32 sum, one division)``.

Shapes: ``x`` any shape, float32 (fp16/bf16 accumulated in fp32); ``dim`` any (negative counts from the
end); output ``x.shape`` without ``dim`` (kept as 1 with ``keepdim``), ``x``'s dtype. Memory-bound: one
read of the input (4 bytes per fp32 element), no transpose: a last dimension is reduced along contiguous
rows, a middle one with tiles coalesced along the contiguous inner dimension (see :mod:`._reduce`).
"""

from __future__ import annotations

import torch

from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._reduce import (
    MID_CONFIGS,
    ROW_CONFIGS,
    _reduce_mid_kernel,
    _reduce_rows_kernel,
    reduce_dim_launch,
    reduced_shape,
)

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "mean_dim", "mean_dim_launch", "mean_dim_ref"]


def mean_dim_ref(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """PyTorch reference."""
    return torch.mean(x, dim=dim, keepdim=keepdim)


def mean_dim_launch(x: torch.Tensor, dim: int, keepdim: bool = False, row_config: dict | None = None,
                    mid_config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernels on ``x`` (the interpreter included)."""
    return reduce_dim_launch(x, dim, "mean", keepdim, row_config, mid_config)


@zoo_custom_op("cudal1::mean_dim", mutates_args=())
def _mean_dim_op(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    return mean_dim_launch(x, dim, keepdim) if x.is_cuda else mean_dim_ref(x, dim, keepdim)


@_mean_dim_op.register_fake
def _(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    d = dim % max(x.dim(), 1)
    return x.new_empty(reduced_shape(x.shape, d, keepdim) if x.dim() else ())


def mean_dim(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Mean of ``x`` over ``dim``; shape ``x.shape`` without ``dim`` (or with it as 1 if
    ``keepdim``), dtype of ``x`` (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.mean_dim``."""
    return call("mean_dim", x, int(dim), bool(keepdim))


_SIG_ROWS = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "divisor": "fp32"}
_SIG_MID = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_red": "i32", "inner": "i32", "r_chunk": "i32", "divisor": "fp32"}
#: for ``python -m cudal1.kernelzoo.compile_targets`` (the shared kernels of ``_reduce``, imported here)
TRITON_KERNELS = [
    TritonKernel(_reduce_rows_kernel.__name__, _SIG_ROWS, constexprs={"IS_MAX": False}, configs="ROW_CONFIGS"),
    TritonKernel(_reduce_mid_kernel.__name__, _SIG_MID, constexprs={"IS_MAX": False}, configs="MID_CONFIGS"),
]
