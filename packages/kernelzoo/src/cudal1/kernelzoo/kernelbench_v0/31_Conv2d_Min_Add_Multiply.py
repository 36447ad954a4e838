"""KernelBench level 2, 31_Conv2d_Min_Add_Multiply (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16,
30, 30); ``min(., constant_value)``; ``+ bias`` (16, 1, 1); ``* scaling_factor``).

One Triton kernel does the whole forward, the convolution included (direct 3-input-channel conv from
``cudal1.kernelzoo.blocks.direct_conv``, plain fp32 FMAs, no TF32; conv bias, min, bias and scale in registers,
one write of the output), replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph
launch and one output copy of host time. Eager runs conv, a scalar-tensor creation and its copy, min, add and
mul.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
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
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        return launch_conv2d_tail(_fused_kernel, self.conv, x, tensors=(self.bias,),
                                  scalars=(float(self.constant_value), float(self.scaling_factor)))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        # the kernel reads the bias as one value per output channel (the task's (C, 1, 1) shape)
        if not direct_ok(self.conv, x) or tuple(self.bias.shape) != (self.conv.out_channels, 1, 1):
            v = torch.clamp(self.conv(x), max=float(self.constant_value))
            return (v + self.bias) * self.scaling_factor
        return self._triton(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
