"""KernelBench level 2, 87_Conv2d_Subtract_Subtract_Mish (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) ->
(128, 16, 30, 30), 7.4 MB; ``- subtract_value_1``, ``- subtract_value_2``, mish).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, then two subtractions and mish, each a full read and write of the
7.4 MB conv output. Each program computes a (16 channels, 256 positions) tile of one sample in fp32 registers
(direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), adds the conv bias,
subtracts the two values in the reference's order, applies mish (``x (u^2 + 2u) / (u^2 + 2u + 2)``, u = e^x: exact
to a few ulp) and writes the output once. Eager: 5 kernels, launch-bound. One launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, launch_conv2d_tail, mish


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW, s1, s2,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = (v - s1) - s2
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, mish(v), mask=cmask[:, None] & pmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value_1 = subtract_value_1
        self.subtract_value_2 = subtract_value_2

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        return launch_conv2d_tail(_fused_kernel, self.conv, x, scalars=(float(self.subtract_value_1), float(self.subtract_value_2)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return F.mish(self.conv(x) - self.subtract_value_1 - self.subtract_value_2)
        return self._triton(x)
