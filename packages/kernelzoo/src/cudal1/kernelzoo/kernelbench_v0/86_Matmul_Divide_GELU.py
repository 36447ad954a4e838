"""KernelBench level 2, 86_Matmul_Divide_GELU (x: (128, 512) fp32; Linear(512 -> 1024); ``/ 10.0``; exact GELU ->
(128, 1024)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call), the division and the erf GELU run in one
Triton pass, and the two are replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one
graph launch and one output copy of host time, against eager's addmm, div and gelu launches. The earlier
single-launch Triton version (no graph) was at parity with eager.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import gelu


@triton.jit
def _tail_kernel(y_ptr, out_ptr, numel, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, gelu(v / divisor), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.linear.weight, self.linear.bias).contiguous()
        out = torch.empty_like(y)
        _tail_kernel[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), float(self.divisor), BLOCK=1024,
                                                       num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and x.dtype == torch.float32:
            return self._triton(x)
        y = F.linear(x, self.linear.weight, self.linear.bias)
        return F.gelu(y / self.divisor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
