"""KernelBench level 2, 54_Conv2d_Multiply_LeakyReLU_GELU (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) ->
(128, 16, 30, 30), 7.4 MB; ``* multiplier`` (a (16, 1, 1) parameter), LeakyReLU(0.01), exact (erf) GELU).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, then mul, leaky ReLU and GELU, each a full read and write of the
7.4 MB conv output. Each program computes a (16 channels, 256 positions) tile of one sample in fp32 registers
(direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), adds the conv bias,
applies the per-channel multiplier, the leaky ReLU and the erf GELU and writes the output once. Eager: 5 kernels,
launch-bound. One launch here, as in the other single-launch conv files.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, gelu, launch_conv2d_tail


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, m_ptr, out_ptr, C_IN, H, W, C, OH, OW, slope,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = v * tl.load(m_ptr + c, mask=cmask, other=0.0)[:, None]
    v = tl.where(v > 0, v, v * slope)
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, gelu(v), mask=cmask[:, None] & pmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU()

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        return launch_conv2d_tail(_fused_kernel, self.conv, x, tensors=(self.multiplier,),
                                  scalars=(float(self.leaky_relu.negative_slope),))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the kernel reads the multiplier as one value per output channel (the task's (C, 1, 1) shape)
        if not direct_ok(self.conv, x) or self.multiplier.numel() != self.conv.out_channels:
            return F.gelu(self.leaky_relu(self.conv(x) * self.multiplier))
        return self._triton(x)
