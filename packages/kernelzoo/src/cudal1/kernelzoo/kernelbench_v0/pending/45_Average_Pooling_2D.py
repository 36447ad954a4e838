"""KernelBench level 1, 45_Average_Pooling_2D (x: (16, 64, 256, 256) fp32, ``nn.AvgPool2d(3)``: stride 3, no
padding -> (16, 64, 85, 85)).

:func:`cudal1.kernelzoo.blocks.pool_cuda.avg_pool` with ``method="rows"``: one CUDA C block per (plane, 8 output
rows) reads the 24 input rows it needs with 16-byte streaming loads (all issued before use), sums each output
row's three input rows column by column into shared memory, then each output adds three neighbouring column sums
and divides once by 9. Reads 255 of the 256 input rows once (267 MB), writes 30 MB. Summation order: rows first,
then columns (PyTorch sums row by row); fp32.

Eager's avg_pool2d: 0.151-0.154 ms through the harness on an H100 (1.9 TB/s); ~0.1 ms at the copy rate.

History: the direct kernel (one thread per output, nine 4-byte loads) measured 1.03x, CI [1.02, 1.06], then with
the lane's workers pinned 0.98x, CI [0.93, 1.03] (2026-11-27), and was moved here; the zoo's Triton pooling
kernels lost (0.68x, 0.18x). The rows kernel (2026-11-27, sandboxed harness, eager baseline): 1.03x, 95% CI [0.98,
1.05], timing_unstable (0.150 ms against 0.151); a probe timed it level with the direct kernel (0.143 ms each,
eager 0.150; benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md). Still at parity: stays here.
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
