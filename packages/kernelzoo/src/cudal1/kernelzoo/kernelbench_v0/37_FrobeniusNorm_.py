"""KernelBench level 1, 37_FrobeniusNorm_ (x: (16, 64, 256, 256) fp32; ``x / torch.norm(x, p="fro")``).

:func:`cudal1.kernelzoo.blocks.streaming_cuda.frobenius_normalize`: two CUDA C launches and no host
synchronisation. The first sums the squares (1056 blocks, grid-stride, four 16-byte loads in flight per thread;
the block that arrives last sums the partials in a fixed order and stores ``sqrt`` of the total on the device);
the second divides every element by it (a true division, as eager) walking the tensor from its end, which the
first pass has just left in L2 (~50 MB of the 268 MB). Launched through the driver (``cuda_jit.DirectKernel``).

Eager: the norm's reduction and the division, 0.364 ms through the harness on an H100 (805 MB moved: 2.2 TB/s).
At the measured copy rate (2.97 TB/s) the same traffic less the L2 hits is about 0.26 ms. The earlier version
measured 1.00x. Expected: 1.2-1.35x.

Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.10x, 95% CI [1.09, 1.13] (benchmarks/results/2026-11-27-kernelbench-v0-level1-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.streaming_cuda import frobenius_normalize


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return frobenius_normalize(x)
