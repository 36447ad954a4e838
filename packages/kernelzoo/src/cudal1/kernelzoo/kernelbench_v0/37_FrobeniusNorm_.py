"""KernelBench level 1, 37_FrobeniusNorm_ (x: (16, 64, 256, 256) fp32; ``x / torch.norm(x, p="fro")``).

:func:`cudal1.kernelzoo.blocks.streaming_cuda.frobenius_normalize`: two CUDA C launches and no host
synchronisation. The first sums the squares (1056 blocks, grid-stride, four 16-byte loads in flight per thread;
the block that arrives last sums the partials in a fixed order and stores ``sqrt`` of the total on the device);
the second divides every element by it (a true division, as eager) walking the tensor from its end, which the
first pass has just left in L2 (~50 MB of the 268 MB). Launched through the driver (``cuda_jit.DirectKernel``).

Eager: the norm's reduction and the division (805 MB moved), below the GPU's copy rate. Here the same traffic less
the L2 hits, at streaming rate. The earlier version was no faster than eager.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.streaming_cuda import frobenius_normalize


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return frobenius_normalize(x)
