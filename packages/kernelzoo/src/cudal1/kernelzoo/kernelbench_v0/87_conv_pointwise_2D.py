"""KernelBench level 1, 87_conv_pointwise_2D (x: (16, 3, 256, 256) fp32, ``nn.Conv2d(3, 64, kernel_size=1)``,
no bias by default -> (16, 64, 256, 256) fp32).

A 1x1 convolution is, per pixel, a (C_out, C_in) matrix times the pixel's C_in values. With C_in = 3 it is
all output: 268 MB written for 12.6 MB read and 3 multiply-adds per output element, so it is bound by the
output write. Eager runs cuDNN's fp32 implicit GEMM (0.256 ms on an H100 in the 2026-11-24 self-run, about
1.1 TB/s). Here one Triton kernel: a program owns BLOCK_P pixels of one image and BLOCK_CO output channels,
loads each input channel's pixel row once (coalesced), accumulates the outer product with the weight column
in fp32 registers (C_in multiply-adds in channel order, plus the bias) and writes the (BLOCK_CO, BLOCK_P)
tile with contiguous stores. Expected ~2x: the kernel should run near the write bandwidth (~0.1 ms for
280 MB), plus the ~15 us of host time a Python-launched Triton kernel costs. Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _pointwise_conv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_IN, C_OUT, HW, HAS_BIAS: tl.constexpr,
                           BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = tl.program_id(2).to(tl.int64)
    p_ok = p < HW
    co_ok = co < C_OUT
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    x_base = x_ptr + n * C_IN * HW
    for c in range(C_IN):
        xv = tl.load(x_base + c * HW + p, mask=p_ok, other=0.0)
        wv = tl.load(w_ptr + co * C_IN + c, mask=co_ok, other=0.0)
        acc += wv[:, None] * xv[None, :]
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=co_ok, other=0.0)[:, None]
    y_off = (n * C_OUT + co[:, None]) * HW + p[None, :]
    tl.store(y_ptr + y_off, acc, mask=co_ok[:, None] & p_ok[None, :])


def pointwise_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """1x1 conv of ``x`` (N, C_in, H, W) with ``weight`` (C_out, C_in, 1, 1), ``bias`` (C_out,) or None, fp32."""
    if not x.is_cuda:
        return torch.nn.functional.conv2d(x, weight, bias)
    n, c_in, h, w = x.shape
    c_out = weight.shape[0]
    xc, wc = x.contiguous(), weight.contiguous()
    y = torch.empty((n, c_out, h, w), device=x.device, dtype=torch.float32)
    block_co = min(64, triton.next_power_of_2(c_out))
    block_p = 128
    grid = (triton.cdiv(h * w, block_p), triton.cdiv(c_out, block_co), n)
    _pointwise_conv_kernel[grid](xc, wc, bias if bias is not None else wc, y, c_in, c_out, h * w,
                                 HAS_BIAS=bias is not None, BLOCK_P=block_p, BLOCK_CO=block_co, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pointwise_conv2d(x, self.conv1d.weight, self.conv1d.bias)
