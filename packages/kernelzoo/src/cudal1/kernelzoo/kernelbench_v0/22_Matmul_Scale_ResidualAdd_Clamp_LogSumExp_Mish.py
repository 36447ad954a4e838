"""KernelBench level 2, 22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish (x: (128, 512) fp32; Linear(512 -> 1024);
``* s``; ``v + v``; clamp to [-10, 10]; logsumexp over the 1024 features (keepdim); ``l * mish(l)`` -> (128, 1)).

The GEMM stays in cuBLAS (F.linear with the module's weight and bias, full fp32) and ONE Triton kernel, a
program per row, does the whole tail in registers: the scale and the doubling (``v * s`` then ``w + w``, as
eager rounds them), the clamp, a max-shifted logsumexp over the row, and ``l * mish(l)`` with
``tanh(softplus(l)) = n / (n + 2)``, ``n = e^l (e^l + 2)`` (exact identity; 1 for l > 20, where fp32 already
rounds it to 1), writing one float per row. Eager runs the GEMM, multiply, add, clamp, logsumexp (about six
kernels: max, subtract, exp, sum, log, add), mish and multiply: about 15 kernels, launch-bound. Three launches
here (GEMM, output allocation, tail).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, out_ptr, N, scale, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    v = tl.load(y_ptr + row * N + offs, mask=m, other=0.0)
    v = v * scale
    v = v + v
    v = tl.minimum(tl.maximum(v, lo), hi)
    v = tl.where(m, v, float("-inf"))
    mx = tl.max(v, 0)
    lse = mx + tl.log(tl.sum(tl.where(m, tl.exp(v - mx), 0.0), 0))
    e = tl.exp(tl.minimum(lse, 20.0))
    n = e * (e + 2.0)
    t = tl.where(lse > 20.0, 1.0, n / (n + 2.0))  # tanh(softplus(lse))
    tl.store(out_ptr + row, lse * (lse * t))


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.matmul
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.out_features <= 16384):
            v = lin(x) * self.scale_factor
            v = torch.clamp(v + v, self.clamp_min, self.clamp_max)
            lse = torch.logsumexp(v, dim=1, keepdim=True)
            return lse * F.mish(lse)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.matmul
        y = F.linear(x, lin.weight, lin.bias)
        n = y.shape[1]
        out = torch.empty((y.shape[0], 1), device=y.device, dtype=y.dtype)
        _tail_kernel[(y.shape[0],)](y, out, n, float(self.scale_factor), float(self.clamp_min),
                                    float(self.clamp_max), BLOCK=triton.next_power_of_2(n), num_warps=4)
        return out
