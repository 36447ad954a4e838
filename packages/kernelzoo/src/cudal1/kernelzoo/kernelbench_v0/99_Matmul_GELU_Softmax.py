"""KernelBench level 2, 99_Matmul_GELU_Softmax (x: (128, 100) fp32; Linear(100 -> 10); exact GELU; softmax over
the 10 features -> (128, 10)).

ONE Triton kernel, a program per 32 rows holding the whole (tiny) output row: the 100-term fp32 dot
products by FMA (no TF32), the bias, the erf GELU and a max-shifted softmax over the row, in registers; one write.
Eager runs cuBLAS's addmm, GELU and softmax: three ops, launch-bound; one launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk,
                  BB: tl.constexpr, BH: tl.constexpr):
    rb = tl.program_id(0) * BB + tl.arange(0, BB)
    rh = tl.arange(0, BH)
    bm = rb < M
    hm = rh < N
    acc = tl.zeros((BB, BH), tl.float32)
    for k in range(K):  # K is tiny: an fp32 FMA per product, no TF32
        xv = tl.load(x_ptr + rb * sxm + k * sxk, mask=bm, other=0.0)
        wv = tl.load(w_ptr + rh * swn + k * swk, mask=hm, other=0.0)
        acc += xv[:, None] * wv[None, :]
    v = acc + tl.load(b_ptr + rh, mask=hm, other=0.0)[None, :]

    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    v = tl.where(hm[None, :], v, float("-inf"))
    e = tl.exp(v - tl.max(v, 1)[:, None])
    v = e / tl.sum(e, 1)[:, None]
    tl.store(y_ptr + rb[:, None] * N + rh[None, :], v, mask=bm[:, None] & hm[None, :])

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and lin.out_features <= 4096):
            return torch.softmax(torch.nn.functional.gelu(lin(x)), dim=1)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        w = lin.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 32),)](x, w, lin.bias, y, M, N, K, x.stride(0), x.stride(1),
                                             w.stride(0), w.stride(1), BB=32, BH=max(16, triton.next_power_of_2(N)),
                                             num_warps=4)
        return y
