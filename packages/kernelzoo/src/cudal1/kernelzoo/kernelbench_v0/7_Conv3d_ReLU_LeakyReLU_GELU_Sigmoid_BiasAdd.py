"""KernelBench level 2, 7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd (x: (128, 3, 16, 32, 32) fp32;
Conv3d(3 -> 16, k=3) -> (128, 16, 14, 30, 30), 103 MB; relu, leaky_relu(0.01), gelu (erf), sigmoid,
``+ bias`` (16, 1, 1, 1)).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32) and one Triton kernel
does the whole tail in place on its output: conv bias, relu, leaky relu, exact erf GELU, sigmoid, bias: one read
and one write. Eager adds the conv bias in a separate pass and runs five more elementwise kernels, each reading
and writing the 103 MB tensor (about 1.2 GB of traffic against our 0.2 GB); the convolution itself is unchanged.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
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
    v = tl.maximum(v, 0.0)
    v = tl.where(v >= 0, v, v * 0.01)  # leaky_relu (a no-op after relu, kept as written)
    v = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    out = 1.0 / (1.0 + tl.exp(-v)) + tl.load(b_ptr + c)
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
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            v = F.leaky_relu(torch.relu(conv(x)), negative_slope=0.01)
            return torch.sigmoid(F.gelu(v)) + self.bias
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        return fused_epilogue(y, conv.bias, self.bias)
