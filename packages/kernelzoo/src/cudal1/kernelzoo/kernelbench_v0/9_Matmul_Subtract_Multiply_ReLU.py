"""KernelBench level 2, 9_Matmul_Subtract_Multiply_ReLU (x: (128, 10) fp32; Linear(10 -> 5); ``- 2.0``; ``* 1.5``;
ReLU -> (128, 5)).

A 128x10x5 product is 6400 multiply-adds: one Triton kernel computes it with plain fp32 FMAs (a runtime loop
over K, a (BLOCK_M, next_pow2(N)) register tile per program, no TF32), adds the bias, subtracts, scales and
applies ReLU before its only write; the kernel is replayed through a CUDA graph (``CUDAGraphForward``): per call one
input copy, one graph launch and one output copy of host time, against eager's addmm, sub, mul and relu launches.
What remains is the host time of three launches; the GPU work is negligible. Larger sizes (N > 128 or K > 1024)
run cuBLAS and the tail in PyTorch.

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
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sub, mul, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mm = rm < M
    nm = rn < N
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(K):
        a = tl.load(x_ptr + rm * K + k, mask=mm, other=0.0)
        b = tl.load(w_ptr + rn * K + k, mask=nm, other=0.0)
        acc += a[:, None] * b[None, :]
    v = (acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :] - sub) * mul
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tl.maximum(v, 0.0), mask=mm[:, None] & nm[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.linear.weight.contiguous()
        m, k = x.shape
        n = w.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(m, 32),)](x, w, self.linear.bias, y, m, n, k, float(self.subtract_value),
                                             float(self.multiply_value), BM=32, BN=max(2, triton.next_power_of_2(n)),
                                             num_warps=4)
        return y

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        if (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None
                and lin.out_features <= 128 and lin.in_features <= 1024):
            return self._triton(x)
        return torch.relu((F.linear(x, lin.weight, lin.bias) - self.subtract_value) * self.multiply_value)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
