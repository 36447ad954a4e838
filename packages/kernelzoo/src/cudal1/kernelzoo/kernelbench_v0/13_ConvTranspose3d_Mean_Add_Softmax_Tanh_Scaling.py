"""KernelBench level 2, 13_ConvTranspose3d_Mean_Add_Softmax_Tanh_Scaling (x: (16, 8, 16, 32, 32) fp32;
ConvTranspose3d(8 -> 16, k=3, stride=2, pad=1) -> (16, 16, 31, 63, 63), mean over the 16 channels (keepdim),
``+ bias`` (1, 1, 1, 1, 1), softmax over dim 1 (now of size 1), tanh, ``* scaling_factor``).

Exact algebra, for every input and parameter value: the channel mean of a transposed convolution is the
transposed convolution with the channel-mean weight, ``mean_c convT(x, w)[c] = convT(x, w.mean(1)) + b.mean()``
(linearity; only the order of an fp32 sum changes). So cuDNN runs ConvTranspose3d(8 -> 1) with the averaged
weight (computed in every forward, 3.5 KB) and bias ``b.mean() + bias``, writing 7.9 MB instead of the 126 MB
16-channel output, and one Triton kernel applies the rest exactly as written: the size-1 softmax
``exp(z - z) / exp(z - z)`` (1 for finite z, NaN for inf/NaN as in eager), tanh, scale. Eager writes and
re-reads the 126 MB transposed-conv output for the mean, then runs add, softmax, tanh and mul passes; the 16 times
smaller transposed conv and single epilogue do far less work. The harness marks this task degenerate: it is left
out of every average.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _softmax1_tanh_scale_kernel(y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    z = tl.load(y_ptr + offs, mask=mask, other=0.0)
    e = tl.exp(z - z)
    p = e / e  # softmax over a dimension of size 1
    t = 1.0 - 2.0 / (tl.exp(2.0 * p) + 1.0)  # tanh, p in [0, 1] or NaN
    tl.store(out_ptr + offs, t * scale, mask=mask)


def softmax1_tanh_scale(y: torch.Tensor, scale: float) -> torch.Tensor:
    """``tanh(softmax(y, dim=1)) * scale`` for fp32 y whose dim 1 has size 1."""
    if not y.is_cuda:
        return torch.tanh(torch.softmax(y, dim=1)) * scale
    out = torch.empty_like(y)
    n = y.numel()
    _softmax1_tanh_scale_kernel[(triton.cdiv(n, 4096),)](y, out, n, float(scale), BLOCK=4096, num_warps=8)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias_shape, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        w = ct.weight.mean(dim=1, keepdim=True)  # (Cin, 1, k, k, k): the channel mean, by linearity
        b = ct.bias.mean().view(1) + self.bias.view(1)
        y = F.conv_transpose3d(x, w, b, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
        return softmax1_tanh_scale(y.contiguous(), self.scaling_factor)
