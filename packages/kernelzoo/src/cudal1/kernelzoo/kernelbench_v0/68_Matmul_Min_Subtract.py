"""KernelBench level 2, 68_Matmul_Min_Subtract (x: (128, 10) fp32; Linear(10 -> 5); ``min(v, c) - c`` with ``c``
a scalar parameter -> (128, 5)).

ONE Triton kernel, a program per 32 rows holding the whole (tiny) output row: the 10-term fp32 dot
products by FMA (no TF32), the bias, and ``min(v, c) - c`` with ``c`` read from the parameter inside the call, in
registers; one write.
Eager runs cuBLAS's addmm, the minimum and the subtraction: three ops, launch-bound; one launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, c_ptr, sxm, sxk, swn, swk,
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

    c = tl.load(c_ptr)
    v = tl.minimum(v, c) - c
    tl.store(y_ptr + rb[:, None] * N + rh[None, :], v, mask=bm[:, None] & hm[None, :])

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, constant):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and lin.out_features <= 4096 and self.constant.numel() == 1
                and self.constant.dim() == 0):
            return torch.min(lin(x), self.constant) - self.constant
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        w = lin.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(M, 32),)](x, w, lin.bias, y, M, N, K, self.constant, x.stride(0), x.stride(1),
                                             w.stride(0), w.stride(1), BB=32, BH=max(16, triton.next_power_of_2(N)),
                                             num_warps=4)
        return y
