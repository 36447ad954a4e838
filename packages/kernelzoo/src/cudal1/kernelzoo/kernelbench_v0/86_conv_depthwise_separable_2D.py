"""KernelBench level 1, 86_conv_depthwise_separable_2D (x: (16, 3, 256, 256) fp32; depthwise 3x3 conv
(groups = 3, stride 1, no padding, no dilation) then a pointwise 1x1 conv 3 -> 64; no biases by default
-> (16, 64, 254, 254) fp32).

Eager runs two kernels: PyTorch's depthwise kernel writes the (16, 3, 254, 254) intermediate, then cuDNN's
fp32 implicit GEMM reads it and writes the 264 MB output (0.283 ms on an H100 in the 2026-11-24 self-run).
Here ONE Triton kernel: a program owns BLOCK_P output pixels of one image and BLOCK_CO output channels; for
each input channel it computes the depthwise value of its pixels in fp32 registers (the KxK taps in order
kh, kw, plus the depthwise bias), then adds its outer product with the pointwise weight column to the
(BLOCK_CO, BLOCK_P) accumulator, and finally writes the tile (plus the pointwise bias) with contiguous stores.
The intermediate never touches memory: one read of x (12.6 MB, the taps' overlap served from L1/L2) and one
write of the output, so it should run near the write bandwidth (~0.1 ms) plus ~15 us of host time for a
Python-launched Triton kernel. Expected ~2.3x. Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _separable_conv_kernel(x_ptr, dw_ptr, db_ptr, pw_ptr, pb_ptr, y_ptr, C_IN, C_OUT, H, W, OH, OW,
                           K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
                           HAS_BIAS: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = tl.program_id(2).to(tl.int64)
    p_ok = p < OH * OW
    co_ok = co < C_OUT
    oh = p // OW
    ow = p % OW
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    for c in range(C_IN):
        x_base = x_ptr + (n * C_IN + c) * H * W
        d = tl.zeros((BLOCK_P,), tl.float32)
        for kh in tl.static_range(K):
            ih = oh * STRIDE - PAD + kh * DIL
            h_ok = p_ok & (ih >= 0) & (ih < H)
            for kw in tl.static_range(K):
                iw = ow * STRIDE - PAD + kw * DIL
                m = h_ok & (iw >= 0) & (iw < W)
                v = tl.load(x_base + ih * W + iw, mask=m, other=0.0)
                d += v * tl.load(dw_ptr + c * (K * K) + kh * K + kw)
        if HAS_BIAS:
            d += tl.load(db_ptr + c)
        wv = tl.load(pw_ptr + co * C_IN + c, mask=co_ok, other=0.0)
        acc += wv[:, None] * d[None, :]
    if HAS_BIAS:
        acc += tl.load(pb_ptr + co, mask=co_ok, other=0.0)[:, None]
    y_off = (n * C_OUT + co[:, None]) * (OH * OW) + p[None, :]
    tl.store(y_ptr + y_off, acc, mask=co_ok[:, None] & p_ok[None, :])


def separable_conv2d(x: torch.Tensor, depthwise: nn.Conv2d, pointwise: nn.Conv2d) -> torch.Tensor:
    """``pointwise(depthwise(x))`` for ``x`` (N, C_in, H, W) fp32, a square-kernel depthwise conv with square
    stride, padding and dilation, and a 1x1 pointwise conv."""
    dw_b, pw_b = depthwise.bias, pointwise.bias
    if not x.is_cuda:
        d = F.conv2d(x, depthwise.weight, dw_b, depthwise.stride, depthwise.padding, depthwise.dilation,
                     depthwise.groups)
        return F.conv2d(d, pointwise.weight, pw_b)
    n, c_in, h, w = x.shape
    k = depthwise.kernel_size[0]
    s, pad, dil = depthwise.stride[0], depthwise.padding[0], depthwise.dilation[0]
    oh = (h + 2 * pad - dil * (k - 1) - 1) // s + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // s + 1
    c_out = pointwise.weight.shape[0]
    y = torch.empty((n, c_out, oh, ow), device=x.device, dtype=torch.float32)
    block_co = min(64, triton.next_power_of_2(c_out))
    block_p = 128
    dw, pw = depthwise.weight.contiguous(), pointwise.weight.contiguous()
    has_bias = dw_b is not None  # both convs take the task's one ``bias`` flag
    grid = (triton.cdiv(oh * ow, block_p), triton.cdiv(c_out, block_co), n)
    _separable_conv_kernel[grid](x.contiguous(), dw, dw_b if has_bias else dw, pw, pw_b if has_bias else pw, y,
                                 c_in, c_out, h, w, oh, ow, K=k, STRIDE=s, PAD=pad, DIL=dil, HAS_BIAS=has_bias,
                                 BLOCK_P=block_p, BLOCK_CO=block_co, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                   dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return separable_conv2d(x, self.depthwise, self.pointwise)
