"""KernelBench level 2, 67_Conv2d_GELU_GlobalAvgPool (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128,
16, 30, 30), 7.4 MB; exact (erf) GELU; global average pool -> (128, 16)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, GELU and a mean reduction, writing and re-reading the 7.4 MB conv
output three times. One program per sample computes all 16 channels over all 900 positions in one (16, 1024)
fp32 register tile (direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32; larger
images loop over position blocks), adds the conv bias, applies GELU, sums each channel's positions in registers
and writes the 16 means (8 KB for the batch); the conv output never reaches memory. Deterministic (no atomics).
Eager: 4 kernels, launch-bound. One launch here; with only 128 programs, one per sample, the kernel is
latency-bound.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, gelu, pos_block


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    cb = tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    npos = OH * OW
    acc = tl.zeros([BLOCK_C], tl.float32)
    for p0 in range(0, npos, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        pmask = p < npos
        v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
        g = gelu(v + cb)
        acc += tl.sum(tl.where(pmask[None, :], g, 0.0), axis=1)
    tl.store(out_ptr + n * C + c, acc / npos, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        oh, ow = h - k + 1, w - k + 1
        out = torch.empty((n, c), device=x.device, dtype=x.dtype)
        _fused_kernel[(n,)](x, conv.weight, conv.bias, out, c_in, h, w, c, oh, ow, K=k,
                            BLOCK_C=triton.next_power_of_2(c), BLOCK_P=pos_block(oh * ow, 1024), num_warps=8)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return F.adaptive_avg_pool2d(F.gelu(self.conv(x)), 1).squeeze(-1).squeeze(-1)
        return self._triton(x)
