"""KernelBench level 2, 39_Gemm_Scale_BatchNorm (x: (128, 1024) fp32; Linear(1024 -> 512); ``* scale`` (512,);
BatchNorm1d(512) (eval: running statistics) -> (128, 512)).

ONE Triton kernel: a 16x32 output tile per program (128-256 programs at the task's sizes), the tile's
fp32 GEMM by ``tl.dot`` with ``input_precision="ieee"`` (FMA, no TF32), then the per-feature affine map
``((v + b) * scale - running_mean) * weight / sqrt(running_var + eps) + bias``, read from the current
parameters and running statistics inside the call in registers, one
write of the output.
In training mode (batch statistics, running-stat updates) the module runs the plain formula. Eager runs the
GEMM, the multiply and the batch norm: three ops, launch-bound; one launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, s_ptr, rm_ptr, rv_ptr, g_ptr, be_ptr, eps,
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

    v = (acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :]) * tl.load(s_ptr + rn, mask=nm, other=0.0)[None, :]
    rstd = 1.0 / tl.sqrt(tl.load(rv_ptr + rn, mask=nm, other=1.0) + eps)
    v = (v - tl.load(rm_ptr + rn, mask=nm, other=0.0)[None, :]) * (tl.load(g_ptr + rn, mask=nm, other=0.0) * rstd)[None, :] \
        + tl.load(be_ptr + rn, mask=nm, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], v, mask=mm[:, None] & nm[None, :])

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.gemm.bias is not None
                and not bn.training and bn.affine and bn.running_mean is not None
                and self.scale.shape == (self.gemm.out_features,)):
            return bn(self.gemm(x) * self.scale)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.gemm
        w = lin.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](
            x, w, lin.bias, y, M, N, K, self.scale, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, self.bn.eps,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), BM=16, BN=32, BK=32, num_warps=4)
        return y
