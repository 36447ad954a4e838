"""KernelBench level 2, 55_Matmul_MaxPool_Sum_Scale (x: (128, 10) fp32; Linear(10 -> 5); MaxPool1d(2) over the
features -> 2 (the fifth feature is dropped, floor mode); sum over them; ``* scale_factor`` (0.5) -> (128,)).

ONE Triton kernel, a program per 32 rows: for each position ``p`` of the pool window it forms the outputs
``p, k + p, 2k + p, ...`` of the Linear (10-term fp32 dot products by FMA, no TF32, plus bias) and keeps the
running maximum, then sums the pooled values over the row and scales; one write of 128 floats (features past
the last full window are never computed: the pool drops them). Eager runs cuBLAS's addmm, the pool, the sum and
the multiply: four ops on a few KB, launch-bound; one launch here. An earlier, different attempt at this task was
rejected `reference_drift`; this one removes three of the four ops.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, L, K, PK, scale, sxm, sxk, swn, swk,
                  BB: tl.constexpr, BL: tl.constexpr):
    rb = tl.program_id(0) * BB + tl.arange(0, BB)
    rl = tl.arange(0, BL)
    bm = rb < M
    lm = rl < L
    mx = tl.full((BB, BL), float("-inf"), tl.float32)
    for p in range(PK):
        f = rl * PK + p  # the Linear output feature at window position p of each pooled feature
        acc = tl.zeros((BB, BL), tl.float32)
        for k in range(K):  # K is tiny: an fp32 FMA per product, no TF32
            xv = tl.load(x_ptr + rb * sxm + k * sxk, mask=bm, other=0.0)
            wv = tl.load(w_ptr + f * swn + k * swk, mask=lm, other=0.0)
            acc += xv[:, None] * wv[None, :]
        mx = tl.maximum(mx, acc + tl.load(b_ptr + f, mask=lm, other=0.0)[None, :])
    s = tl.sum(tl.where(lm[None, :], mx, 0.0), 1)
    tl.store(y_ptr + rb, s * scale, mask=bm)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin, pool = self.matmul, self.max_pool
        pk = pool.kernel_size
        nl = lin.out_features // pk if isinstance(pk, int) else 0
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and nl >= 1
                and nl <= 4096 and pool.stride == pk and pool.padding == 0 and pool.dilation == 1
                and not pool.ceil_mode):
            v = pool(lin(x).unsqueeze(1)).squeeze(1)
            return torch.sum(v, dim=1) * self.scale_factor
        return self._fused(x, pk, nl)

    def _fused(self, x: torch.Tensor, pk: int, nl: int) -> torch.Tensor:
        w = self.matmul.weight
        M, K = x.shape
        y = torch.empty((M,), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 32),)](x, w, self.matmul.bias, y, M, nl, K, pk, float(self.scale_factor),
                                             x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                             BB=32, BL=max(16, triton.next_power_of_2(nl)), num_warps=4)
        return y
