"""KernelBench level 2, 81_Gemm_Swish_Divide_Clamp_Tanh_Clamp (x: (128, 1024) fp32; Linear(1024 -> 512);
``v * sigmoid(v)``; ``/ 2``; clamp to [-1, 1]; tanh; clamp to [-1, 1] -> (128, 512)).

The GEMM stays in cuBLAS (F.linear with the module's weight and optional bias, full fp32) and ONE elementwise
Triton kernel applies the whole tail in place on the GEMM's output (one read, one write of 256 KB): swish,
halving, clamp, tanh (overflow-free ``sign(u) (1 - e) / (1 + e)``, ``e = exp(-2|u|)``, absolute error about
1e-7) and the last clamp. Eager runs the GEMM and six elementwise kernels (sigmoid, multiply, divide, clamp,
tanh, clamp), launch-bound; two launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y_ptr + offs, mask=m, other=0.0)
    v = v * (1.0 / (1.0 + tl.exp(-v)))
    v = v / 2.0
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    e = tl.exp(-2.0 * tl.abs(v))
    t = (1.0 - e) / (1.0 + e)
    v = tl.where(v < 0, -t, t)
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    tl.store(y_ptr + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (x.is_cuda and x.dtype == torch.float32):
            v = self.gemm(x)
            v = v * torch.sigmoid(v) / 2.0
            return torch.clamp(torch.tanh(torch.clamp(v, min=-1.0, max=1.0)), min=-1.0, max=1.0)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.gemm.weight, self.gemm.bias)
        n = y.numel()
        if n:
            _tail_kernel[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024, num_warps=4)
        return y
