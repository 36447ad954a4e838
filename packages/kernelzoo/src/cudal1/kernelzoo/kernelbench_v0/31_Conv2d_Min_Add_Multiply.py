"""KernelBench level 2, 31_Conv2d_Min_Add_Multiply (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16,
30, 30), 7.4 MB; ``min(x, constant_value)``, ``+ bias`` (a (16, 1, 1) parameter), ``* scaling_factor``).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, builds a 0-d tensor for the constant on every call, then min, add
and mul, each a full read and write of the 7.4 MB conv output. Each program computes a (16 channels, 256
positions) tile of one sample in fp32 registers (direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``,
plain FMAs, no TF32), adds the conv bias, takes the min with the constant (as fp32, the dtype of the reference's
``torch.tensor(constant_value)``), adds the bias, scales and writes the output once. Eager: 5 kernels and a tensor
construction, 0.15 ms through the harness (2026-11-24 H100 self-run), launch-bound. One launch; expected about
1.5x (measured single-launch conv files: 1.27-1.85x).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, launch_conv2d_tail


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, out_ptr, C_IN, H, W, C, OH, OW, cv, sf,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = tl.minimum(v, cv)
    y = (v + tl.load(b_ptr + c, mask=cmask, other=0.0)[:, None]) * sf
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, y, mask=cmask[:, None] & pmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.constant_value = constant_value
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        return launch_conv2d_tail(_fused_kernel, self.conv, x, tensors=(self.bias,),
                                  scalars=(float(self.constant_value), float(self.scaling_factor)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the kernel reads the bias as one value per output channel (the task's (C, 1, 1) shape)
        if not direct_ok(self.conv, x) or self.bias.numel() != self.conv.out_channels:
            v = torch.minimum(self.conv(x), torch.tensor(self.constant_value, dtype=x.dtype, device=x.device))
            return (v + self.bias) * self.scaling_factor
        return self._triton(x)
