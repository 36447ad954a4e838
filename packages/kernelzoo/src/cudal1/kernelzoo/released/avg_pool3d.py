"""Released solution for built-in task `avg_pool3d`: the zoo's Triton 3-D average pooling (3x3x3 windows,
stride 2, padding 1 counted in the divisor, as nn.AvgPool3d): overlapping windows re-read from L1/L2, so DRAM
sees one read and one write, faster than eager (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.avg_pool3d import avg_pool3d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return avg_pool3d(x, self.kernel_size, self.stride, self.padding)
