"""KernelBench level 1, 45_Average_Pooling_2D (x: (16, 64, 256, 256) fp32, ``nn.AvgPool2d(3)``: stride 3, no
padding -> (16, 64, 85, 85)).

:func:`cudal1.kernelzoo.blocks.pool_cuda.avg_pool` with ``method="rows"``: one CUDA C block per (plane, 8 output
rows) reads the 24 input rows it needs with 16-byte streaming loads (all issued before use), sums each output
row's three input rows column by column into shared memory, then each output adds three neighbouring column sums
and divides once by 9. Reads 255 of the 256 input rows once (267 MB), writes 30 MB. Summation order: rows first,
then columns (PyTorch sums row by row); fp32.

Eager's avg_pool2d already streams the input at a good share of the copy rate, so the headroom is small.

History: the direct kernel (one thread per output, nine 4-byte loads) was at parity with eager through the
harness, and was moved here; the zoo's Triton pooling kernels were slower than eager. The rows kernel was at
parity too (timing unstable), and a probe timed it level with the direct kernel. Still at parity: stays here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
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
        return avg_pool(x, p.kernel_size, p.stride, p.padding, p.ceil_mode, p.count_include_pad, p.divisor_override,
                        method="rows")
