"""KernelBench level 1, 45_Average_Pooling_2D (x: (16, 64, 256, 256) fp32, nn.AvgPool2d(3): stride 3, no
padding, floor mode -> (16, 64, 85, 85)): the zoo's Triton pooling kernel (one program per BLOCK_H x BLOCK_W output
tile, the 9 taps unrolled with the window as compile-time constants; one DRAM read of x, one write of y). Eager's
avg_pool2d CUDA kernel computes one output per thread with runtime window loops; the zoo op measured 1.45x eager on
the built-in 2 x 2 / stride 2 task (2026-11-22 H100 report). Here the stride-3 taps make the loads less coalesced
for both, so expect about 1.2-1.4x (268 MiB in, 30 MiB out, memory-bound). Not yet measured on a GPU."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.avg_pool2d import avg_pool2d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.avg_pool
        if p.ceil_mode or p.divisor_override is not None:  # not this task's module; keep torch's semantics
            return p(x)
        return avg_pool2d(x, p.kernel_size, p.stride, p.padding, p.count_include_pad)
