"""KernelBench level 1, 46_Average_Pooling_3D (x: (16, 32, 64, 64, 64) fp32, nn.AvgPool3d(3, stride=2,
padding=1), count_include_pad, floor mode -> (16, 32, 32, 32, 32)): the zoo's Triton pooling kernel (one program
per output tile, the 27 taps unrolled with the window as compile-time constants, overlapping halos re-read from
L1/L2 so DRAM sees about one read of x and one write of y). Eager's avg_pool3d CUDA kernel computes one output per
thread with runtime loops and strided, poorly coalesced loads; the zoo op measured 1.74x eager on the built-in task
with this exact window (k 3, s 2, p 1; 2026-11-22 H100 report). Expected about 1.5-1.7x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.62x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md).

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 1.41x, 95% CI [1.35, 1.45] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
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
