"""KernelBench level 2, 29_Matmul_Mish_Mish (x: (128, 10) fp32; Linear(10 -> 20); Mish; Mish -> (128, 20)).

ONE Triton kernel, a program per 32 rows holding the whole (tiny) output row: the 10-term fp32 dot
products by FMA (no TF32), the bias, and Mish twice (``v tanh(softplus(v))`` as ``v n / (n + 2)`` with
``n = e^v (e^v + 2)``, exact algebra, argument capped at 20 like softplus' threshold), in registers; one write.
Eager runs cuBLAS's addmm (several small kernels at K = 10) and two Mish kernels: launch-bound; one launch here.

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

    e = tl.exp(tl.minimum(v, 20.0))
    n = e * (e + 2.0)
    v = v * (n / (n + 2.0))
    e = tl.exp(tl.minimum(v, 20.0))
    n = e * (e + 2.0)
    v = v * (n / (n + 2.0))
    tl.store(y_ptr + rb[:, None] * N + rh[None, :], v, mask=bm[:, None] & hm[None, :])

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and lin.out_features <= 4096):
            return torch.nn.functional.mish(torch.nn.functional.mish(lin(x)))
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
