"""KernelBench level 1, 41_Max_Pooling_1D (x: (16, 64, 128) fp32; ``nn.MaxPool1d(4, stride=2, padding=2,
dilation=3)`` -> (16, 64, 62)).

Eager on CUDA: ``max_pool1d_with_indices`` -> ``unsqueeze`` -> ``max_pool2d_with_indices`` (values and int64
indices both allocated and written) -> ``squeeze``, a few dispatcher ops for microseconds of GPU work. Here: one
Triton launch through ``fast_launch.FastLaunch``, :func:`cudal1.kernelzoo.blocks.pool1d.max_pool1d`: one program
per tile of (sample, channel) rows x output positions, the four dilated taps unrolled as masked loads (padding is
``-inf``), NaN propagated as PyTorch's max pooling does; only the values are computed. A module with
``return_indices`` or ``ceil_mode`` set runs PyTorch's ``nn.MaxPool1d``.

Pending: not yet measured on a GPU.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.pool1d import max_pool1d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False):
        super().__init__()
        self.maxpool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                                    return_indices=return_indices)
        p = self.maxpool
        self._kernel = not (p.return_indices or p.ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.maxpool
        if not self._kernel:
            return p(x)
        return max_pool1d(x, p.kernel_size, p.stride, p.padding, p.dilation)
