"""KernelBench level 2, 64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU (x: (128, 1024) fp32; Linear(1024 -> 512);
logsumexp over the 512 features (keepdim); LeakyReLU(0.01) twice; exact GELU twice -> (128, 1)).

The GEMM stays in cuBLAS (F.linear with the module's weight and optional bias, full fp32) and ONE Triton kernel,
a program per row, does the whole tail in registers: a max-shifted logsumexp over the row, then the two leaky
ReLUs and the two erf GELUs on that one value, one float written per row. Eager runs the GEMM, logsumexp (about
six kernels), two leaky ReLUs and two GELUs on a (128, 1) tensor: 16 kernels, launch-bound. Three launches here
(GEMM, output allocation, tail).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    v = tl.load(y_ptr + row * N + offs, mask=m, other=float("-inf"))
    mx = tl.max(v, 0)
    mx_safe = tl.where(mx == float("-inf"), 0.0, mx)  # as torch.logsumexp: an all -inf row gives -inf
    lse = mx_safe + tl.log(tl.sum(tl.where(m, tl.exp(v - mx_safe), 0.0), 0))
    lse = tl.where(lse > 0, lse, lse * 0.01)
    lse = tl.where(lse > 0, lse, lse * 0.01)
    lse = 0.5 * lse * (1.0 + tl.math.erf(lse * 0.7071067811865476))
    lse = 0.5 * lse * (1.0 + tl.math.erf(lse * 0.7071067811865476))
    tl.store(out_ptr + row, lse)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.out_features <= 16384):
            v = torch.logsumexp(lin(x), dim=1, keepdim=True)
            v = F.leaky_relu(F.leaky_relu(v, negative_slope=0.01), negative_slope=0.01)
            return F.gelu(F.gelu(v))
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        y = F.linear(x, lin.weight, lin.bias)
        n = y.shape[1]
        out = torch.empty((y.shape[0], 1), device=y.device, dtype=y.dtype)
        _tail_kernel[(y.shape[0],)](y, out, n, BLOCK=triton.next_power_of_2(n), num_warps=4)
        return out
