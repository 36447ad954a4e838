"""Released solution for built-in task `max_pool2d`: the zoo's Triton max pooling (3x3 windows, stride 2,
padding 1; NaN propagates as in PyTorch), faster than eager
(benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.max_pool2d import max_pool2d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_pool2d(x, self.kernel_size, self.stride, self.padding)
