"""KernelBench level 1, 93_masked_cumsum (x: (128, 4000) fp32, mask: (128, 4000) bool, dim 1; ``cumsum(x *
mask, dim)``).

One Triton launch, one program per row: the row of x and of the mask (read as bytes, no float copy of the
mask) in chunks of up to 4096 (here one chunk), ``v = x * mask`` (a multiply, as eager, so a NaN or inf of x
under a False mask still gives NaN), an inclusive ``tl.cumsum`` (a tree scan in fp32) plus the carried fp32
total of the earlier chunks, stored straight to the output: no ``x * mask`` temporary. Launched through
``fast_launch.FastLaunch`` (the compiled kernel's launcher: far less host time than ``kernel[grid]``). Only the
last dim of a 2-D input takes the kernel; other layouts run the PyTorch expression.

Eager runs mul (a 2 MB temporary) and cumsum: two launches, mostly host time. An earlier version was slower than
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
def _masked_cumsum_rows_kernel(x_ptr, m_ptr, y_ptr, n, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n
    carry = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    for start in range(0, n, BLOCK):
        k = start + tl.arange(0, BLOCK)
        mask = k < n
        x = tl.load(x_ptr + base + k, mask=mask, other=0.0)
        m = tl.load(m_ptr + base + k, mask=mask, other=0)
        v = x * m.to(tl.float32)
        tl.store(y_ptr + base + k, tl.cumsum(v, 0) + carry, mask=mask)
        carry += tl.sum(v, 0)


def _handle(block: int) -> FastLaunch:
    return FastLaunch(_masked_cumsum_rows_kernel, BLOCK=block, num_warps=8 if block >= 2048 else 4)


_LAUNCH = {1 << k: _handle(1 << k) for k in range(4, MAX_BLOCK.bit_length())}


def masked_cumsum_rows(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``cumsum(x * mask, dim=1)`` of a contiguous float32 (rows, n) tensor and a contiguous bool mask of its
    shape, one launch (GPU, or Triton's interpreter on CPU)."""
    rows, n = x.shape
    y = torch.empty_like(x)
    if rows and n:
        _LAUNCH[min(MAX_BLOCK, max(16, 1 << (n - 1).bit_length()))]((rows,), x, mask, y, n)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if (x.is_cuda and x.dtype == torch.float32 and mask.dtype == torch.bool and x.dim() == 2
                and self.dim in (1, -1) and mask.shape == x.shape):
            return masked_cumsum_rows(x.contiguous(), mask.contiguous())
        return torch.cumsum(x * mask, dim=self.dim)
