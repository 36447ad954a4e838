"""KernelBench level 2, 16_ConvTranspose2d_Mish_Add_Hardtanh_Scaling (x: (128, 32, 16, 16) fp32;
ConvTranspose2d(32 -> 64, k=4, stride=2, pad=1, output_pad=1) -> (128, 64, 33, 33), 36 MB; mish,
``+ add_value``, hardtanh [-1, 1], ``* scale``).

cuDNN runs the transposed convolution without its bias (F.conv_transpose2d with the module's weight, fp32) and
one Triton kernel does the tail in place on its output: conv bias, mish ``v * tanh(softplus(v))`` (softplus
threshold 20 as torch), add, clamp, scale; one read and one write. Eager adds the conv bias in a separate pass
and runs four more elementwise kernels (mish, add, hardtanh, mul), each reading and writing 36 MB: five launches
and 360 MB of traffic become one launch and 72 MB. The 0.61 ms reference (2026-11-24 H100 self-run) is mostly
the transposed conv; expect about 1.15-1.25x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.19x, 95% CI [1.10, 1.22] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
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
def _epilogue_kernel(y_ptr, cb_ptr, n_ch, inner, add_value, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one (sample, channel) plane
    c = row % n_ch
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < inner
    offs = row.to(tl.int64) * inner + s
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c)  # conv output with its bias
    sp = tl.where(v > 20.0, v, tl.log(1.0 + tl.exp(tl.minimum(v, 20.0))))
    v = v * _tanh(sp) + add_value
    out = tl.minimum(tl.maximum(v, -1.0), 1.0) * scale
    tl.store(y_ptr + offs, out, mask=mask)


def fused_epilogue(y: torch.Tensor, conv_bias: torch.Tensor, add_value: float, scale: float) -> torch.Tensor:
    """In place on the bias-free conv output y (N, C, *spatial), contiguous fp32 on CUDA; returns y."""
    n_ch = y.shape[1]
    inner = y[0, 0].numel()
    block = min(2048, triton.next_power_of_2(inner))
    grid = (y.shape[0] * n_ch, triton.cdiv(inner, block))
    _epilogue_kernel[grid](y, conv_bias, n_ch, inner, add_value, scale, BLOCK=block, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, add_value, scale):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
                                                 output_padding)
        self.add_value = add_value
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not x.is_cuda:
            v = F.mish(ct(x)) + self.add_value
            return F.hardtanh(v, min_val=-1, max_val=1) * self.scale
        y = F.conv_transpose2d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        return fused_epilogue(y, ct.bias, float(self.add_value), float(self.scale))
