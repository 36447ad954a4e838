"""Released solution for built-in task `avg_pool2d`: the zoo's Triton average pooling (2x2 windows, stride 2),
one read of x and one write of the output, faster than eager
(benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.avg_pool2d import avg_pool2d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return avg_pool2d(x, self.kernel_size, self.stride, 0)
