"""KernelBench level 1, 30_Softsign (x: (16, 16384) fp32; ``x / (1 + |x|)``): one elementwise Triton kernel (one
read, one write). Eager runs abs, add and div as three kernels with two 1 MB temporaries; at this size the call is
launch-bound, so the gain rests on one launch instead of three.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softsign_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.abs(x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (x.is_cuda and x.dtype == torch.float32):
            return torch.nn.functional.softsign(x)
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        if n:
            _softsign_kernel[(triton.cdiv(n, 2048),)](xc, y, n, BLOCK=2048, num_warps=4)
        return y
