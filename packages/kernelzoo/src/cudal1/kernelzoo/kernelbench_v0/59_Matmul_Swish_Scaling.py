"""KernelBench level 2, 59_Matmul_Swish_Scaling (x: (128, 1024) fp32; Linear(1024 -> 512); ``v * sigmoid(v)``;
``* scaling_factor`` (2.0) -> (128, 512)).

ONE Triton kernel: a 16x32 output tile per program (128-256 programs at the task's sizes), the tile's
fp32 GEMM by ``tl.dot`` with ``input_precision="ieee"`` (FMA, no TF32), then the bias, swish and the scaling in
registers, one write of the output.
Eager runs the GEMM, sigmoid and two multiplies: four ops, launch-bound; one launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, scale,
                  sxm, sxk, swn, swk, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mm = rm < M
    nm = rn < N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        km = kk < K
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=mm[:, None] & km[None, :], other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=nm[None, :] & km[:, None], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")

    v = acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :]
    v = v * (1.0 / (1.0 + tl.exp(-v))) * scale
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], v, mask=mm[:, None] & nm[None, :])

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.matmul.bias is not None):
            v = self.matmul(x)
            return v * torch.sigmoid(v) * self.scaling_factor
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.matmul
        w = lin.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](
            x, w, lin.bias, y, M, N, K, float(self.scaling_factor),
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), BM=16, BN=32, BK=32, num_warps=4)
        return y
