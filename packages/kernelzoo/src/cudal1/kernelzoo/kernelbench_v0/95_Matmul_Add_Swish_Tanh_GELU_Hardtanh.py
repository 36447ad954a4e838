"""KernelBench level 2, 95_Matmul_Add_Swish_Tanh_GELU_Hardtanh (x: (128, 1024) fp32; Linear(1024 -> 512);
``+ add_value`` (512,); ``sigmoid(v) * v``; tanh; exact GELU; hardtanh to [-1, 1] -> (128, 512)).

The GEMM stays in cuBLAS (F.linear with the module's weight and bias, full fp32) and ONE Triton kernel, a
program per row, applies the whole tail in place on the GEMM's output (one read, one write of 256 KB): the
``add_value`` parameter, swish, tanh (overflow-free ``sign(u) (1 - e) / (1 + e)``, ``e = exp(-2|u|)``), erf
GELU and the clamp. Eager runs the GEMM and six elementwise kernels (add, sigmoid, multiply, tanh, GELU,
hardtanh), launch-bound; two launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, a_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    v = tl.load(y_ptr + row * N + offs, mask=m, other=0.0) + tl.load(a_ptr + offs, mask=m, other=0.0)
    v = (1.0 / (1.0 + tl.exp(-v))) * v
    e = tl.exp(-2.0 * tl.abs(v))
    t = (1.0 - e) / (1.0 + e)
    v = tl.where(v < 0, -t, t)
    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    tl.store(y_ptr + row * N + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nf = self.matmul.out_features
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.add_value.shape == (nf,)
                and nf <= 16384):
            v = self.matmul(x) + self.add_value
            v = torch.tanh(torch.sigmoid(v) * v)
            return F.hardtanh(F.gelu(v), min_val=-1, max_val=1)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.matmul.weight, self.matmul.bias)
        n = y.shape[1]
        _tail_kernel[(y.shape[0],)](y, self.add_value, n, BLOCK=triton.next_power_of_2(n), num_warps=4)
        return y
