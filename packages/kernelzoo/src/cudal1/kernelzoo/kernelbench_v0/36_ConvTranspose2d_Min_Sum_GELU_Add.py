"""KernelBench level 2, 36_ConvTranspose2d_Min_Sum_GELU_Add (x: (128, 3, 32, 32) fp32; ConvTranspose2d(3 -> 16,
k=3, stride 2, padding 1, output padding 1) -> (128, 16, 64, 64); min over channels -> (128, 1, 64, 64); sum over
the rows -> (128, 1, 1, 64); exact GELU; ``+ bias`` (16, 1, 1) -> (128, 16, 1, 64)).

The transposed convolution stays cuDNN fp32 (``F.conv_transpose2d`` without its bias); the rest is ONE Triton
kernel, one program per (sample, block of 64 columns): a loop over the 64 rows loads the (16 channels, 64 columns)
slice, adds the conv bias, takes the channel min and accumulates the column sums in registers; then GELU and the
16 broadcast bias adds, one write of the (128, 16, 1, 64) result. Both are replayed through a CUDA graph
(``CUDAGraphForward``): per call one input copy, one graph launch and one output copy of host time, against
eager's conv-transpose (+ bias), min, sum, gelu and add launches. What remains: three launches of host time, the
cuDNN kernel writing 33.5 MB and one read of it.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import gelu


@triton.jit
def _tail_kernel(y_ptr, cb_ptr, b_ptr, out_ptr, C, OH, OW, BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cm = c < C
    ow = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    wm = ow < OW
    mask = cm[:, None] & wm[None, :]
    cb = tl.load(cb_ptr + c, mask=cm, other=0.0)[:, None]
    base = y_ptr + n.to(tl.int64) * C * OH * OW + (c * OH * OW)[:, None] + ow[None, :]
    colsum = tl.zeros([BLOCK_W], tl.float32)
    for oh in range(OH):
        v = tl.load(base + oh * OW, mask=mask, other=0.0) + cb
        colsum += tl.min(tl.where(mask, v, float("inf")), 0)
    g = gelu(colsum)
    b = tl.load(b_ptr + c, mask=cm, other=0.0)
    offs = n.to(tl.int64) * C * OW + (c * OW)[:, None] + ow[None, :]
    tl.store(out_ptr + offs, g[None, :] + b[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
                                                 output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        y = F.conv_transpose2d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        n, c, oh, ow = y.shape
        out = torch.empty((n, c, 1, ow), device=y.device, dtype=y.dtype)
        block_w = min(64, triton.next_power_of_2(ow))
        _tail_kernel[(n, triton.cdiv(ow, block_w))](y, ct.bias, self.bias, out, c, oh, ow,
                                                     BLOCK_C=triton.next_power_of_2(c), BLOCK_W=block_w, num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.bias is not None
                and ct.padding_mode == "zeros" and tuple(self.bias.shape) == (ct.out_channels, 1, 1)
                and ct.out_channels <= 128):
            return self._triton(x)
        v = torch.amin(ct(x), dim=1, keepdim=True)
        return F.gelu(torch.sum(v, dim=2, keepdim=True)) + self.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
