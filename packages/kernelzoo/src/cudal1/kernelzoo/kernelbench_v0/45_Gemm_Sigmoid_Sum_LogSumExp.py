"""KernelBench level 2, 45_Gemm_Sigmoid_Sum_LogSumExp (x: (128, 10) fp32; Linear(10 -> 20); sigmoid; sum over the
20 features; logsumexp over the 128 rows -> a scalar; ``linear2`` is constructed but never used by forward).

Launch-bound: eager runs the addmm, sigmoid, sum and logsumexp (several kernels: max, subtract, exp, sum, log,
add) for a few KB of data. Here ONE Triton program does it all in registers: the 128x20 product by fp32 FMA
over the 10 inputs (no TF32), bias, sigmoid, the row sums (masked) and a max-shifted logsumexp, and writes the
scalar. ``linear2`` stays a module so the parameters match the reference by name. One launch against
about eight.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_kernel(x_ptr, w_ptr, b_ptr, out_ptr, B, IN, HID, BB: tl.constexpr, BH: tl.constexpr):
    rb = tl.arange(0, BB)
    rh = tl.arange(0, BH)
    bm = rb < B
    hm = rh < HID
    acc = tl.zeros([BB, BH], tl.float32)
    for k in range(IN):
        xv = tl.load(x_ptr + rb * IN + k, mask=bm, other=0.0)
        wv = tl.load(w_ptr + rh * IN + k, mask=hm, other=0.0)
        acc += xv[:, None] * wv[None, :]
    z = acc + tl.load(b_ptr + rh, mask=hm, other=0.0)[None, :]
    sig = 1.0 / (1.0 + tl.exp(-z))
    s = tl.sum(tl.where(hm[None, :], sig, 0.0), 1)
    s = tl.where(bm, s, float("-inf"))
    m = tl.max(s, 0)
    tl.store(out_ptr, m + tl.log(tl.sum(tl.exp(s - m), 0)))


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear1
        bb = triton.next_power_of_2(max(x.shape[0], 1)) if x.dim() == 2 else 0
        bh = triton.next_power_of_2(lin.out_features)
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None
                and bb * bh <= 16384):
            return torch.logsumexp(torch.sum(torch.sigmoid(lin(x)), dim=1), dim=0)
        out = torch.empty((), device=x.device, dtype=x.dtype)
        _fused_kernel[(1,)](x.contiguous(), lin.weight.contiguous(), lin.bias, out, x.shape[0], x.shape[1],
                            lin.out_features, BB=bb, BH=bh, num_warps=4)
        return out
