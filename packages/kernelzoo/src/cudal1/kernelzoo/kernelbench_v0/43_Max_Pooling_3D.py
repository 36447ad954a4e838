"""KernelBench level 1, 43_Max_Pooling_3D (x: (16, 32, 64, 64, 64) fp32, ``nn.MaxPool3d(3, stride=2, padding=1,
dilation=3)``, no indices, floor mode -> (16, 32, 30, 30, 30)). Second version.

:func:`cudal1.kernelzoo.blocks.pool_cuda.max_pool` with ``method="planes"``: one CUDA C block per (plane, output
depth). It folds the three input depth slices its window taps (64 x 64 each, read with 16-byte loads, all
issued before use) into one NaN-propagating max in shared memory, then each thread reads its outputs' nine
(row, column) taps from there and stores the values coalesced. The max is taken over the same 27 values as
PyTorch's (so the same value; a NaN anywhere in a window gives NaN). Launched through the driver
(``cuda_jit.DirectKernel``). ``return_indices`` keeps the module.

The first version (one thread per output, 27 loads each through L1) measured 1.38x (0.36 ms against eager's
0.50; 2026-11-27 call 1): its loads, not DRAM, bound it. Here L2 -> SM traffic is 48 KB per 900 outputs and
DRAM sees each slice about once (neighbouring output depths share slices and run together). Expected: about
0.22-0.27 ms, 1.8-2.2x. Probe (2026-11-27 call 2, harness timing): 0.279 ms against eager's 0.505, 1.81x.

Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.74x, 95% CI [1.66, 1.84] (benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.pool_cuda import max_pool


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.maxpool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                                    return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.maxpool
        if p.return_indices:
            return p(x)
        return max_pool(x, p.kernel_size, p.stride, p.padding, p.dilation, p.ceil_mode, method="planes")
