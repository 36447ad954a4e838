"""KernelBench level 1, 44_Average_Pooling_1D (x: (16, 32, 128) fp32; ``nn.AvgPool1d(4, stride=2, padding=1)``,
``count_include_pad=True`` -> (16, 32, 64)).

Eager on CUDA: ``unsqueeze`` -> ``avg_pool2d`` -> ``squeeze``, a few dispatcher ops for microseconds of GPU work.
Here: one Triton launch through ``fast_launch.FastLaunch``, :func:`cudal1.kernelzoo.blocks.pool1d.avg_pool1d`: one
program per tile of (sample, channel) rows x output positions, the four taps unrolled as masked loads summed in
PyTorch's order and divided by 4 (or by the in-range taps where ``count_include_pad`` is off); fp32. A module with
``ceil_mode`` set runs PyTorch's pooling (the block falls back to ``F.avg_pool1d``).

Pending: not yet measured on a GPU.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.pool1d import avg_pool1d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.avg_pool
        return avg_pool1d(x, p.kernel_size, p.stride, p.padding, p.count_include_pad, ceil_mode=p.ceil_mode)
