"""KernelBench level 1, 91_cumsum_reverse (x: (128, 4000) fp32, dim 1; ``cumsum(x.flip(dim), dim).flip(dim)``:
``y[i, k] = sum_{j >= k} x[i, j]``).

One Triton launch, one program per row: the row is read back to front in chunks of up to 4096 (here one chunk;
a chunk's lane j holds ``x[n - 1 - j]``, the flipped row), scanned with an inclusive ``tl.cumsum`` (a tree
scan in fp32) plus the carried fp32 total of the chunks after it, and each value stored back at its own
column: the same sums in the same direction as eager, without the two flipped copies. Launched through
``fast_launch.FastLaunch`` (the compiled kernel's launcher: far less host time than ``kernel[grid]``). Only the
last dim of a 2-D input takes the kernel; other layouts run the PyTorch expression.

Eager runs flip, cumsum and flip: three launches and two 2 MB copies. A CUDA-graph version was at parity with
eager. One allocation and one launch cost about what a single eager op costs in this harness (the floor is the
two synchronisations and the launch latency).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.fast_launch import FastLaunch

MAX_BLOCK = 4096


@triton.jit
def _reverse_cumsum_rows_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n
    carry = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    for start in range(0, n, BLOCK):
        j = start + tl.arange(0, BLOCK)  # position in the flipped row
        mask = j < n
        k = n - 1 - j  # column in x and y
        x = tl.load(x_ptr + base + k, mask=mask, other=0.0)
        tl.store(y_ptr + base + k, tl.cumsum(x, 0) + carry, mask=mask)
        carry += tl.sum(x, 0)


def _handle(block: int) -> FastLaunch:
    return FastLaunch(_reverse_cumsum_rows_kernel, BLOCK=block, num_warps=8 if block >= 2048 else 4)


_LAUNCH = {1 << k: _handle(1 << k) for k in range(4, MAX_BLOCK.bit_length())}


def reverse_cumsum_rows(x: torch.Tensor) -> torch.Tensor:
    """``y[i, k] = sum_{j >= k} x[i, j]`` of a contiguous float32 (rows, n) tensor, one launch (GPU, or
    Triton's interpreter on CPU)."""
    rows, n = x.shape
    y = torch.empty_like(x)
    if rows and n:
        _LAUNCH[min(MAX_BLOCK, max(16, 1 << (n - 1).bit_length()))]((rows,), x, y, n)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.dim in (1, -1):
            return reverse_cumsum_rows(x.contiguous())
        return torch.flip(torch.cumsum(torch.flip(x, (self.dim,)), self.dim), (self.dim,))
