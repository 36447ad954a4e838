"""KernelBench level 1, 38_L1Norm_ (x: (16, 16384) fp32; ``x / sum(|x|, dim=1, keepdim=True)``).

One Triton launch, one program per row: a row of up to 16384 values is loaded once into registers (16 warps,
32 values a thread), ``sum |x|`` reduced in fp32 as a tree, and ``x / s`` stored (a true division, as eager);
longer rows take two passes over 4096-value chunks (sum, then divide; the second pass reads from L2). Launched
through ``fast_launch.FastLaunch`` (the compiled kernel's launcher: a small part of the host time of
``kernel[grid]``). 2-D inputs only; others run the PyTorch expression.

Eager runs abs, sum and div: three launches and a (16, 16384) temporary, nearly all host time. An earlier Triton
version was slower than eager. Here one allocation and one launch cost about what a single eager op costs in this
harness (the floor is the two synchronisations and the launch latency).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.fast_launch import FastLaunch

#: longest row held in registers (one pass)
ONE_PASS_MAX = 16384
CHUNK = 4096


@triton.jit
def _l1_normalize_rows_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ONE_PASS: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n
    if ONE_PASS:
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        s = tl.sum(tl.abs(x), 0)
        tl.store(y_ptr + base + cols, x / s, mask=mask)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.abs(tl.load(x_ptr + base + cols, mask=cols < n, other=0.0))
        s = tl.sum(acc, 0)
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
            tl.store(y_ptr + base + cols, x / s, mask=mask)


def _handle(block: int, one_pass: bool) -> FastLaunch:
    warps = 16 if block >= 8192 else 8 if block >= 2048 else 4
    return FastLaunch(_l1_normalize_rows_kernel, BLOCK=block, ONE_PASS=one_pass, num_warps=warps)


_ONE_PASS = {1 << k: _handle(1 << k, True) for k in range(4, ONE_PASS_MAX.bit_length())}
_TWO_PASS = _handle(CHUNK, False)


def l1_normalize_rows(x: torch.Tensor) -> torch.Tensor:
    """``x / sum(|x|, dim=1, keepdim=True)`` of a contiguous float32 (rows, n) tensor, one launch (GPU, or
    Triton's interpreter on CPU)."""
    rows, n = x.shape
    y = torch.empty_like(x)
    if rows and n:
        launch = _ONE_PASS[max(16, 1 << (n - 1).bit_length())] if n <= ONE_PASS_MAX else _TWO_PASS
        launch((rows,), x, y, n)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and x.dtype == torch.float32 and x.dim() == 2:
            return l1_normalize_rows(x.contiguous())
        return x / torch.abs(x).sum(dim=1, keepdim=True)
