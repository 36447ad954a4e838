"""KernelBench level 2, 94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm (x: (128, 512) fp32; Linear(512 -> 1024);
``+ bias`` (1024,); hardtanh to [-1, 1]; Mish; GroupNorm(32 groups of 32 features, eps 1e-5, affine)
-> (128, 1024)).

ONE Triton kernel does everything: each program owns a (16 rows x one group) output tile, so the group
statistics need nothing from other programs. It computes the tile's fp32 GEMM (``tl.dot`` with
``input_precision="ieee"``: FMA, no TF32), adds the Linear's bias and the extra bias, clamps, applies Mish
(``v tanh(softplus(v))`` as ``v n / (n + 2)`` with ``n = e^v (e^v + 2)``, exact algebra, argument capped at 20
like softplus' threshold), then the group's mean and centred (biased) variance per row, normalisation and
the affine, and writes the tile once. Eager runs the GEMM, add, hardtanh, Mish and the group norm: five ops,
launch-bound; one launch here (256 programs of 16x32x512).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, b2_ptr, g_ptr, be_ptr, y_ptr, M, N, K, GS, eps,
                  sxm, sxk, swn, swk, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    j = tl.arange(0, BN)
    rn = tl.program_id(1) * GS + j  # this program's group: features [g*GS, (g+1)*GS)
    mm = rm < M
    nm = j < GS
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        km = kk < K
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=mm[:, None] & km[None, :], other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=nm[None, :] & km[:, None], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    v = acc + (tl.load(b_ptr + rn, mask=nm, other=0.0) + tl.load(b2_ptr + rn, mask=nm, other=0.0))[None, :]
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    e = tl.exp(tl.minimum(v, 20.0))
    n = e * (e + 2.0)
    v = v * (n / (n + 2.0))
    m2 = mm[:, None] & nm[None, :]
    v = tl.where(m2, v, 0.0)
    mean = tl.sum(v, 1) / GS
    d = tl.where(m2, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / GS + eps)
    out = d * rstd[:, None] * tl.load(g_ptr + rn, mask=nm, other=0.0)[None, :] \
        + tl.load(be_ptr + rn, mask=nm, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], out, mask=m2)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.groupnorm = nn.GroupNorm(num_groups=num_groups, num_channels=out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin, gn = self.gemm, self.groupnorm
        nf = lin.out_features
        gs = nf // gn.num_groups
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and gn.affine
                and self.bias.shape == (nf,) and gs <= 256):
            v = self.mish(self.hardtanh(lin(x) + self.bias))
            return F.group_norm(v, gn.num_groups, gn.weight, gn.bias, gn.eps)
        return self._fused(x, gs)

    def _fused(self, x: torch.Tensor, gs: int) -> torch.Tensor:
        lin, gn = self.gemm, self.groupnorm
        w = lin.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 16), gn.num_groups)](
            x, w, lin.bias, self.bias, gn.weight, gn.bias, y, M, N, K, gs, gn.eps,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            BM=16, BN=max(16, triton.next_power_of_2(gs)), BK=32, num_warps=4)
        return y
