"""KernelBench level 2, 26_ConvTranspose3d_Add_HardSwish (x: (128, 32, 16, 16, 16), add_input:
(128, 64, 32, 32, 32) fp32; ConvTranspose3d(32 -> 64, k=3, stride=2, pad=1, output_pad=1) -> 1.07 GB, ``z = v +
add_input``, ``z * hardswish(z)``; the task's own ``bias`` parameter is never used by its forward).

cuDNN runs the transposed convolution without its bias (F.conv_transpose3d with the module's weight, fp32), and
one Triton kernel does the tail in place on that output: ``v = y + conv_bias[c]``, ``z = v + add_input``,
``z * z * clamp(z + 3, 0, 6) / 6``: it reads y and add_input once and writes once (3.2 GB). Eager adds the conv
bias in its own pass, then add (3.2 GB), hardswish (2.1 GB) and mul (3.2 GB): about 10.7 GB, so the tail drops
from about 3.5 ms to about 1.1 ms of the 13.5 ms reference (2026-11-24 H100 self-run, dominated by the
58 GFLOP transposed conv): expect about 1.2x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.24x, 95% CI [1.23, 1.24] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _epilogue_kernel(y_ptr, cb_ptr, a_ptr, n_ch, inner, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one (sample, channel) plane
    c = row % n_ch
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < inner
    offs = row.to(tl.int64) * inner + s
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c)  # conv output with its bias
    z = v + tl.load(a_ptr + offs, mask=mask, other=0.0)
    out = z * z * tl.minimum(tl.maximum(z + 3.0, 0.0), 6.0) / 6.0
    tl.store(y_ptr + offs, out, mask=mask)


def fused_epilogue(y: torch.Tensor, conv_bias: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
    """In place on the bias-free conv output y (N, C, *spatial), contiguous fp32 on CUDA; returns y."""
    n_ch = y.shape[1]
    inner = y[0, 0].numel()
    block = min(2048, triton.next_power_of_2(inner))
    grid = (y.shape[0] * n_ch, triton.cdiv(inner, block))
    _epilogue_kernel[grid](y, conv_bias, add_input, n_ch, inner, BLOCK=block, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))  # unused by the task's forward; kept for its name

    def forward(self, x: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not x.is_cuda:
            z = ct(x) + add_input
            return z * F.hardswish(z)
        y = F.conv_transpose3d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        return fused_epilogue(y, ct.bias, add_input.contiguous())
