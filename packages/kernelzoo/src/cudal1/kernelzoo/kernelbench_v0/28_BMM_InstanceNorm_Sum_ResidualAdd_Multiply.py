"""KernelBench level 2, 28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply (x: (128, 64), y: (128, 128) fp32;
Linear(64 -> 128); InstanceNorm2d on the (128, 1, 1, 128) view, i.e. each row normalised over its 128
features (no affine, no running statistics, eps 1e-5, biased variance); ``+ y``; ``* y`` -> (128, 128)).

The whole forward is ONE Triton kernel: the GEMM is tiny (2 MFLOP), so each program owns 16 full rows, computes
``x W^T`` with ``tl.dot(..., input_precision="ieee")`` (plain fp32 FMA) over K, adds the bias, takes each row's
mean and centred variance in registers (two passes), normalises and applies ``(v + y) * y``, one write.
Eager runs the GEMM, two unsqueezes, the instance norm (a batch-norm over a reshaped copy: several kernels),
two squeezes, add and multiply: about ten kernels, launch-bound. Two launches here (output allocation, kernel).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _linear_rownorm_res_mul_kernel(x_ptr, w_ptr, b_ptr, y_ptr, out_ptr, B, K, N, eps,
                                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mm = rm < B
    nm = rn < N
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        km = rk < K
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=mm[:, None] & km[None, :], other=0.0)
        wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=km[:, None] & nm[None, :], other=0.0)  # W^T tile
        acc = tl.dot(a, wt, acc, input_precision="ieee")
    m2 = mm[:, None] & nm[None, :]
    v = tl.where(m2, acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :], 0.0)
    mean = tl.sum(v, 1) / N
    d = tl.where(m2, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / N + eps)
    offs = rm[:, None] * N + rn[None, :]
    yv = tl.load(y_ptr + offs, mask=m2, other=0.0)
    tl.store(out_ptr + offs, (d * rstd[:, None] + yv) * yv, mask=m2)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.bmm = nn.Linear(in_features, out_features)
        self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        lin, inorm = self.bmm, self.instance_norm
        nf = lin.out_features
        bn = triton.next_power_of_2(nf)
        if not (x.is_cuda and x.dtype == torch.float32 and y.dtype == torch.float32 and x.dim() == 2
                and y.shape == (x.shape[0], nf) and lin.bias is not None and not inorm.affine
                and not inorm.track_running_stats and bn <= 512):
            v = F.layer_norm(lin(x), (nf,), eps=inorm.eps)  # = the instance norm of the (B, 1, 1, nf) view
            return (v + y) * y
        return self._fused(x, y)

    def _fused(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        lin = self.bmm
        x = x if x.is_contiguous() else x.contiguous()
        y = y if y.is_contiguous() else y.contiguous()
        w = lin.weight
        w = w if w.is_contiguous() else w.contiguous()
        B, K = x.shape
        nf = w.shape[0]
        bn = max(16, triton.next_power_of_2(nf))
        out = torch.empty((B, nf), device=x.device, dtype=torch.float32)
        _linear_rownorm_res_mul_kernel[(triton.cdiv(B, 16),)](x, w, lin.bias, y, out, B, K, nf,
                                                              self.instance_norm.eps, BM=16, BN=bn, BK=32,
                                                              num_warps=4)
        return out
