"""KernelBench level 1, 53_Min_reduction_over_a_dimension (x: (16, 256, 256) fp32; ``torch.min(x, dim=1)[0]`` ->
(16, 256)).

Eager on CUDA: ``torch.min(x, dim)`` computes and allocates both the values and the int64 indices, of which the task
keeps the values. Here: one Triton launch through ``fast_launch.FastLaunch``,
:func:`cudal1.kernelzoo.blocks.dim_reduce.amin_dim`: x viewed as (outer, reduced, inner), one program per (outer
index, 32 inner columns), a loop over the reduced dim in coalesced 64 x 32 tiles; a NaN in a reduced line gives NaN,
as ``torch.min`` does. Any ``dim`` of any rank; other dtypes and CPU tensors run ``torch.min``.

Pending: not yet measured on a GPU.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.dim_reduce import amin_dim


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return amin_dim(x, self.dim)
