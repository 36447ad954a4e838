"""KernelBench level 1, 88_MinGPTNewGelu (x: (2000, 2000) fp32; minGPT's tanh GELU
``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``): one elementwise Triton kernel (one read, one
write: 32 MB). Eager runs the expression as eight kernels (pow, mul, add, mul, tanh, add, mul, mul), each reading
one or two 16 MB tensors and writing a 16 MB temporary: about 0.29 GB of traffic against 32 MB, plus eight
launches. tanh is computed overflow-free as ``sign(u) * (1 - e) / (1 + e)`` with ``e = exp(-2|u|)`` (its absolute
error, about 1e-7, is what matters once it is added to 1).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _new_gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * (x * x * x))  # sqrt(2 / pi) * (x + 0.044715 x^3)
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(u < 0, -t, t)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if not (x.is_cuda and x.dtype == torch.float32):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        if n:
            _new_gelu_kernel[(triton.cdiv(n, 4096),)](xc, y, n, BLOCK=4096, num_warps=8)
        return y
