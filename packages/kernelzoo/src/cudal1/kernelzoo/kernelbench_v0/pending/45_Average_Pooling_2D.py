"""KernelBench level 1, 45_Average_Pooling_2D (x: (16, 64, 256, 256) fp32, ``nn.AvgPool2d(3)``: stride 3, no
padding -> (16, 64, 85, 85)).

:func:`cudal1.kernelzoo.blocks.pool_cuda.avg_pool`: a direct CUDA C kernel, one thread per output (last dimension
fastest: a warp's three column taps cover three whole cache lines), the 9 taps unrolled with every size compiled
in, summed in PyTorch's order and divided once by PyTorch's count. Reads the input once (268 MB), writes 30 MB.
Launched through the driver (``cuda_jit.DirectKernel``).

Eager's avg_pool2d: 0.154 ms through the harness on an H100 (1.9 TB/s). The zoo's Triton pooling kernel lost
here (0.68x, 0.18x). Expected: about 0.11 ms, 1.3-1.5x.

Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.03x, 95% CI [1.02, 1.06] (benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md).
Re-measured with the lane's workers pinned to their cores (the harness's default since the tenth pass, 2026-11-27):
0.98x, 95% CI [0.93, 1.03] (ours 0.161 ms against eager's 0.151; benchmarks/results/2026-11-27-kernelbench-v0-pinned-h100.md).
At parity with eager, not reliably above it: moved here from the released set, and the task counts as unsolved.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.pool_cuda import avg_pool


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.avg_pool
        return avg_pool(x, p.kernel_size, p.stride, p.padding, p.ceil_mode, p.count_include_pad, p.divisor_override)
