"""KernelBench level 1, 36_RMSNorm_ (x: (16, 64, 256, 256) fp32; RMS over the channel dim 1, not the last one:
``y = x / sqrt(mean_c(x^2) + eps)``, eps 1e-5): one Triton kernel. Each program owns one sample and a tile of
BLOCK_S spatial positions and loads the (C, BLOCK_S) slab for all C = 64 channels at once (rows of the slab are
contiguous along the spatial axis, so the loads coalesce), reduces x^2 over the channels in registers and writes
``x / rms``: one read and one write of x (537 MB). Eager runs pow (read + write 268 MB), mean over dim 1 (read),
add, sqrt, and a broadcast divide (read x and rms, write y): about 1.07 GB of traffic and a full-size temporary,
so the fused kernel moves about half the bytes.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rms_over_channels_kernel(x_ptr, y_ptr, n_ch, inner, eps, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr,
                              ONE_TILE: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    base = tl.program_id(1).to(tl.int64) * n_ch * inner
    s_mask = s[None, :] < inner
    if ONE_TILE:  # the whole (C, BLOCK_S) slab in registers: one read
        c = tl.arange(0, BLOCK_C)
        mask = (c[:, None] < n_ch) & s_mask
        offs = base + c[:, None].to(tl.int64) * inner + s[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        rms = tl.sqrt(tl.sum(x * x, 0) / n_ch + eps)
        tl.store(y_ptr + offs, x / rms[None, :], mask=mask)
    else:  # many channels: a sum-of-squares pass and a write pass over channel chunks
        acc = tl.zeros([BLOCK_S], tl.float32)
        for c0 in range(0, n_ch, BLOCK_C):
            c = c0 + tl.arange(0, BLOCK_C)
            mask = (c[:, None] < n_ch) & s_mask
            x = tl.load(x_ptr + base + c[:, None].to(tl.int64) * inner + s[None, :], mask=mask, other=0.0)
            acc += tl.sum(x * x, 0)
        rms = tl.sqrt(acc / n_ch + eps)
        for c0 in range(0, n_ch, BLOCK_C):
            c = c0 + tl.arange(0, BLOCK_C)
            mask = (c[:, None] < n_ch) & s_mask
            offs = base + c[:, None].to(tl.int64) * inner + s[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            tl.store(y_ptr + offs, x / rms[None, :], mask=mask)


def rms_over_channels(x: torch.Tensor, eps: float) -> torch.Tensor:
    """``x / sqrt(mean(x^2, dim=1) + eps)`` for float32 ``x`` (N, C, *) on CUDA; output like ``x``."""
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n, c = xc.shape[0], xc.shape[1]
    inner = xc[0, 0].numel()
    if xc.numel() == 0:
        return y
    block_c = triton.next_power_of_2(c)
    one = block_c <= 256
    if not one:
        block_c = 64
    block_s = max(16, min(triton.next_power_of_2(inner), 8192 // block_c))
    _rms_over_channels_kernel[(triton.cdiv(inner, block_s), n)](xc, y, c, inner, eps, BLOCK_C=block_c,
                                                               BLOCK_S=block_s, ONE_TILE=one, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() >= 2):
            return x / torch.sqrt(x.pow(2).mean(1, keepdim=True) + self.eps)
        return rms_over_channels(x, self.eps)
