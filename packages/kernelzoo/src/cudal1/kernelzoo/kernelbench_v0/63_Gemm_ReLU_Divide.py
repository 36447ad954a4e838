"""KernelBench level 2, 63_Gemm_ReLU_Divide (x: (128, 1024) fp32; Linear(1024 -> 512); ReLU; ``/ 2.0`` ->
(128, 512)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call: the same product and bias), ReLU and the
division run in one Triton pass, and the two are replayed through a CUDA graph (``CUDAGraphForward``): per call
one input copy, one graph launch and one output copy of host time, against eager's addmm, relu and div launches.
The earlier single-launch Triton version (no graph) was no faster than eager. What remains: three launches of
host time, the fp32 GEMM, a 0.25 MB pass.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _tail_kernel(y_ptr, out_ptr, numel, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(v, 0.0) / divisor, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
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
        return torch.relu(y) / self.divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
