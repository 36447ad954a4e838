"""KernelBench level 2, 49_ConvTranspose3d_Softmax_Sigmoid (x: (16, 32, 16, 32, 32) fp32;
ConvTranspose3d(32 -> 64, k=3, stride=2, pad=1, output_pad=1) -> (16, 64, 32, 64, 64), 1.07 GB; softmax over
the 64 channels, then sigmoid).

cuDNN runs the transposed convolution without its bias (F.conv_transpose3d with the module's weight, fp32) and
one Triton kernel does bias + channel softmax + sigmoid in place: each program loads a (64 channels,
BLOCK_S positions) slab (each channel row contiguous, so loads coalesce), adds the conv bias, takes the max and
sum over channels in registers and writes ``sigmoid(softmax)``: one read and one write of 1.07 GB. Eager adds
the bias in its own pass, runs softmax over a strided dim 1 (read + write) and sigmoid (read + write): about
6.4 GB of traffic against our 2.1 GB, so about 2.5 ms of tail becomes about 0.7 ms of the 7.3 ms reference
(2026-11-24 H100 self-run); expect about 1.3-1.5x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.32x, 95% CI [1.31, 1.33] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bias_softmax_sigmoid_kernel(y_ptr, cb_ptr, n_ch, inner, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    c = tl.arange(0, BLOCK_C)
    cmask = c < n_ch
    mask = cmask[:, None] & (s[None, :] < inner)
    offs = tl.program_id(1).to(tl.int64) * n_ch * inner + c[:, None] * inner + s[None, :]
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = tl.where(cmask[:, None], v, -float("inf"))
    e = tl.exp(v - tl.max(v, 0)[None, :])
    p = e / tl.sum(e, 0)[None, :]
    tl.store(y_ptr + offs, 1.0 / (1.0 + tl.exp(-p)), mask=mask)


def bias_softmax_sigmoid_(y: torch.Tensor, conv_bias: torch.Tensor) -> torch.Tensor:
    """In place on contiguous fp32 CUDA y (N, C, *spatial): ``sigmoid(softmax(y + conv_bias[c], dim=1))``."""
    n, c = y.shape[0], y.shape[1]
    inner = y[0, 0].numel()
    block_c = triton.next_power_of_2(c)
    block_s = max(16, min(256, 8192 // block_c))
    _bias_softmax_sigmoid_kernel[(triton.cdiv(inner, block_s), n)](y, conv_bias, c, inner, BLOCK_C=block_c,
                                                                  BLOCK_S=block_s, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not x.is_cuda:
            return torch.sigmoid(torch.softmax(ct(x), dim=1))
        y = F.conv_transpose3d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        cb = ct.bias if ct.bias is not None else torch.zeros(y.shape[1], device=y.device, dtype=y.dtype)
        return bias_softmax_sigmoid_(y, cb)
