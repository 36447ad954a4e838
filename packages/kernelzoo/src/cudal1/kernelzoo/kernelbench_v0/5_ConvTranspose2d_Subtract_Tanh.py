"""KernelBench level 2, 5_ConvTranspose2d_Subtract_Tanh (x: (128, 32, 16, 16) fp32; ConvTranspose2d(32 -> 16, k=4,
stride 2, padding 1, output padding 1) -> (128, 16, 33, 33); ``- bias`` (16, 1, 1); tanh).

The transposed convolution stays cuDNN fp32 (``F.conv_transpose2d`` without its bias); the conv bias, the
subtraction and tanh run in ONE Triton pass (overflow-free tanh from ``cudal1.kernelzoo.blocks.direct_conv``), and
the two are replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one
output copy of host time, against eager's conv-transpose (+ bias), sub and tanh launches. The earlier
single-launch Triton version (no graph) was no faster than eager. What remains: three launches of host time, the
cuDNN kernel, one 8.9 MB read + write.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import tanh


@triton.jit
def _tail_kernel(y_ptr, cb_ptr, b_ptr, out_ptr, numel, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    c = (offs // HW) % C
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tanh(v - tl.load(b_ptr + c, mask=mask, other=0.0)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=2, padding=1, output_padding=1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        y = F.conv_transpose2d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        out = torch.empty_like(y)
        n, c, oh, ow = y.shape
        _tail_kernel[(triton.cdiv(y.numel(), 1024),)](y, ct.bias, self.bias, out, y.numel(), c, oh * ow, BLOCK=1024,
                                                       num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.bias is not None
                and ct.padding_mode == "zeros" and tuple(self.bias.shape) == (ct.out_channels, 1, 1)):
            return self._triton(x)
        return torch.tanh(ct(x) - self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
