"""KernelBench level 1, 25_Swish (x: (16, 16384) fp32; ``x * sigmoid(x)``).

One elementwise Triton kernel, ``x * (1 / (1 + exp(-x)))`` in fp32 (one read, one write; exp(-x) overflowing
to inf gives a sigmoid of 0, as eager), 2048 values a program. Launched through ``fast_launch.FastLaunch``
(the compiled kernel's launcher: far less host time than ``kernel[grid]``, whose launch cost is what
made the zoo's elementwise solutions lose to eager at this size).

Eager runs sigmoid and mul: two launches and a 1 MB temporary, mostly host time. Here one allocation and
one launch cost about what a single eager op costs in this harness (the floor is the two synchronisations and
the launch latency).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.fast_launch import FastLaunch

BLOCK = 2048


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * (1.0 / (1.0 + tl.exp(-x))), mask=mask)


_LAUNCH = FastLaunch(_swish_kernel, BLOCK=BLOCK, num_warps=4)


def swish(x: torch.Tensor) -> torch.Tensor:
    """``x * sigmoid(x)`` of a contiguous float32 tensor, one launch (GPU, or Triton's interpreter on CPU)."""
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _LAUNCH(((n + BLOCK - 1) // BLOCK,), x, y, n)  # not triton.cdiv (us a call)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and x.dtype == torch.float32:
            return swish(x.contiguous())
        return torch.nn.functional.silu(x)
