"""KernelBench level 1, 100_HingeLoss (predictions, targets: (128, 1) fp32; ``mean(clamp(1 - p * t, min=0))``
-> scalar): a single Triton program loads all 128 pairs, applies the hinge and writes the mean. Eager runs four
kernels (mul, rsub, clamp, mean) on 512-byte tensors, so the call is pure launch overhead; one launch (plus the
output allocation) should give about 1.5-2x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.21x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _hinge_mean_kernel(p_ptr, t_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        p = tl.load(p_ptr + offs, mask=mask, other=0.0)
        t = tl.load(t_ptr + offs, mask=mask, other=0.0)
        h = 1.0 - p * t
        h = tl.where(h < 0.0, 0.0, h)  # clamp(min=0); NaN stays NaN, as torch.clamp
        acc += tl.where(mask, h, 0.0)
    tl.store(out_ptr, tl.sum(acc, 0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        p, t = predictions, targets
        if not (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.shape == t.shape
                and p.numel() > 0):
            return (1 - p * t).clamp_min(0).mean()
        p, t = p.contiguous(), t.contiguous()
        out = torch.empty((), device=p.device, dtype=torch.float32)
        n = p.numel()
        block = min(4096, triton.next_power_of_2(max(n, 16)))
        _hinge_mean_kernel[(1,)](p, t, out, n, BLOCK=block, num_warps=4)
        return out
