"""KernelBench level 1, 46_Average_Pooling_3D (x: (16, 32, 64, 64, 64) fp32, nn.AvgPool3d(3, stride=2,
padding=1), count_include_pad, floor mode -> (16, 32, 32, 32, 32)): the zoo's Triton pooling kernel (one program
per output tile, the 27 taps unrolled with the window as compile-time constants, overlapping halos re-read from
L1/L2 so DRAM sees about one read of x and one write of y). Eager's avg_pool3d CUDA kernel computes one output per
thread with runtime loops and strided, poorly coalesced loads; the zoo op beat eager on the built-in task
with this exact window (k 3, s 2, p 1).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.avg_pool3d import avg_pool3d


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.avg_pool
        if p.ceil_mode or p.divisor_override is not None:  # not this task's module; keep torch's semantics
            return p(x)
        return avg_pool3d(x, p.kernel_size, p.stride, p.padding, p.count_include_pad)
