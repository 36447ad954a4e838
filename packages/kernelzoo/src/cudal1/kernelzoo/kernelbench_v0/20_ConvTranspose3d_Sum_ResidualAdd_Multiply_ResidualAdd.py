"""KernelBench level 2, 20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd (x: (16, 32, 16, 32, 32) fp32;
ConvTranspose3d(32 -> 64, k=3, stride=2, pad=1, output_pad=1) -> v: (16, 64, 32, 64, 64), 1.07 GB; then
``((v + bias) + v) * v + v`` with bias (64, 1, 1, 1)).

cuDNN runs the transposed convolution without its bias (F.conv_transpose3d with the module's weight, fp32), and
one Triton kernel does the whole tail in place on that output: add the conv bias to get v, then
``((v + bias) + v) * v + v``, one read and one write of 1.07 GB. Eager adds the conv bias in a separate pass,
clones v, and runs four more full-size passes (add, add, mul, add: each reads one or two 1.07 GB tensors and
writes one), about 13 GB of traffic against our 2.1 GB: the tail drops from roughly 4-5 ms to about 0.7 ms of the
8.06 ms reference (2026-11-24 H100 self-run), so expect about 1.7-1.9x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.44x, 95% CI [1.44, 1.45] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _epilogue_kernel(y_ptr, cb_ptr, b_ptr, n_ch, inner, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one (sample, channel) plane
    c = row % n_ch
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < inner
    offs = row.to(tl.int64) * inner + s
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c)  # conv output with its bias
    out = ((v + tl.load(b_ptr + c)) + v) * v + v
    tl.store(y_ptr + offs, out, mask=mask)


def fused_epilogue(y: torch.Tensor, conv_bias: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """In place on the bias-free conv output y (N, C, *spatial), contiguous fp32 on CUDA; returns y."""
    n_ch = y.shape[1]
    inner = y[0, 0].numel()
    block = min(2048, triton.next_power_of_2(inner))
    grid = (y.shape[0] * n_ch, triton.cdiv(inner, block))
    _epilogue_kernel[grid](y, conv_bias, bias, n_ch, inner, BLOCK=block, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not x.is_cuda:
            v = ct(x)
            return ((v + self.bias) + v) * v + v
        y = F.conv_transpose3d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        return fused_epilogue(y, ct.bias, self.bias)
