"""KernelBench level 2, 32_Conv2d_Scaling_Min (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16, 30,
30), 7.4 MB; ``* scale_factor``, min over the 16 channels -> (128, 1, 30, 30)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, a scaling kernel and a channel-min reduction, each a full read of the
7.4 MB conv output. Each program computes all channels of a (16 channels, 256 positions) tile of one sample in
fp32 registers (direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), adds the
conv bias, scales (per element, as the reference does, so a negative ``scale_factor`` is handled too), takes the
channel min in registers and writes only the (128, 1, 30, 30) result (0.46 MB); the conv output is never written.
Eager: 4 kernels, 0.12 ms through the harness (2026-11-24 H100 self-run), launch-bound. One launch; expected
about 1.3x (the same design for 25_Conv2d_Min_Tanh_Tanh, 5 eager kernels, measured 1.27x).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, launch_conv2d_tail


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW, scale,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    m = tl.min(tl.where(cmask[:, None], v * scale, float("inf")), 0)
    tl.store(out_ptr + n.to(tl.int64) * npos + p, m, mask=pmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        # every channel in one tile: bound the positions per program
        return launch_conv2d_tail(_fused_kernel, self.conv, x, scalars=(float(self.scale_factor),), out_channels=1,
                                  pos_cap=max(16, 4096 // triton.next_power_of_2(self.conv.out_channels)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return torch.min(self.conv(x) * self.scale_factor, dim=1, keepdim=True)[0]
        return self._triton(x)
