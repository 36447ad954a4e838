"""KernelBench level 2, 48_Conv3d_Scaling_Tanh_Multiply_Sigmoid (x: (128, 3, 16, 32, 32) fp32;
Conv3d(3 -> 16, k=3) -> (128, 16, 14, 30, 30), 103 MB; ``* scaling_factor`` (16, 1, 1, 1), tanh, ``* bias``
(16, 1, 1, 1), sigmoid).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32) and one Triton kernel
does the whole tail in place on its output: conv bias, per-channel scale, tanh, per-channel multiply, sigmoid;
one read and one write. Eager adds the conv bias in a separate pass and runs four more elementwise kernels,
each reading and writing the 103 MB tensor (about 1 GB of traffic against our 0.2 GB).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tanh(x):
    t = 1.0 - 2.0 / (tl.exp(2.0 * tl.abs(x)) + 1.0)
    return tl.where(x < 0, -t, t)


@triton.jit
def _epilogue_kernel(y_ptr, cb_ptr, s_ptr, b_ptr, n_ch, inner, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one (sample, channel) plane
    c = row % n_ch
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < inner
    offs = row.to(tl.int64) * inner + s
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c)  # conv output with its bias
    v = _tanh(v * tl.load(s_ptr + c)) * tl.load(b_ptr + c)
    out = 1.0 / (1.0 + tl.exp(-v))
    tl.store(y_ptr + offs, out, mask=mask)


def fused_epilogue(y: torch.Tensor, conv_bias: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """In place on the bias-free conv output y (N, C, *spatial), contiguous fp32 on CUDA; returns y."""
    n_ch = y.shape[1]
    inner = y[0, 0].numel()
    block = min(2048, triton.next_power_of_2(inner))
    grid = (y.shape[0] * n_ch, triton.cdiv(inner, block))
    _epilogue_kernel[grid](y, conv_bias, scale, bias, n_ch, inner, BLOCK=block, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            return torch.sigmoid(torch.tanh(conv(x) * self.scaling_factor) * self.bias)
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        return fused_epilogue(y, conv.bias, self.scaling_factor, self.bias)
