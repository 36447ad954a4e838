"""KernelBench level 2, 90_Conv3d_LeakyReLU_Sum_Clamp_GELU (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3)
-> (128, 16, 14, 30, 30), 103 MB; leaky_relu(0.2); ``+ sum_tensor`` (16, 1, 1, 1); clamp(-1, 1); exact GELU).

Eager runs cuDNN's convolution (3 input channels: little work per output, poor use of cuDNN's GEMM tiling) and
then four elementwise kernels, each reading and writing the 103 MB output. Here ONE Triton kernel computes the
convolution directly (a program owns one output depth plane of one sample and 8 output rows; each of the 81
(input channel, tap) pairs adds a coalesced input row segment times the 16 output channels' weights as an outer
product; fp32 FMA, no TF32; 2.1 GFMA in all) and applies the whole tail in registers before its only write.
Traffic drops from about 0.9 GB to the 103 MB output plus the 25 MB input.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3_leaky_sum_clamp_gelu_kernel(x_ptr, w_ptr, cb_ptr, add_ptr, y_ptr, slope, D_in, H_in, W_in,
                                       D_out, H_out, W_out, CIN: tl.constexpr, COUT: tl.constexpr,
                                       BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_out
    od = pid % D_out
    p = tl.arange(0, BH * BW)
    oh = tl.program_id(1) * BH + p // BW
    ow = p % BW
    pm = (oh < H_out) & (ow < W_out)
    co = tl.arange(0, COUT)
    acc = tl.zeros([BH * BW, COUT], tl.float32)
    plane = H_in * W_in
    for ci in range(CIN):
        for kd in tl.static_range(3):
            row0 = ((n * CIN + ci) * D_in + od + kd) * plane
            for kh in tl.static_range(3):
                for kw in tl.static_range(3):
                    xv = tl.load(x_ptr + row0 + (oh + kh) * W_in + ow + kw, mask=pm, other=0.0)
                    wv = tl.load(w_ptr + (co * CIN + ci) * 27 + (kd * 9 + kh * 3 + kw))
                    acc += xv[:, None] * wv[None, :]
    v = acc + tl.load(cb_ptr + co)[None, :]
    v = tl.where(v >= 0, v, v * slope) + tl.load(add_ptr + co)[None, :]
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    out = ((n.to(tl.int64) * COUT + co[None, :]) * D_out + od) * (H_out * W_out) + (oh * W_out + ow)[:, None]
    tl.store(y_ptr + out, v, mask=pm[:, None])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, sum_tensor_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))

    def _fits(self, x: torch.Tensor) -> bool:
        c = self.conv
        cout = c.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and c.kernel_size == (3, 3, 3)
                and c.stride == (1, 1, 1) and c.padding == (0, 0, 0) and c.dilation == (1, 1, 1)
                and c.groups == 1 and c.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and tuple(self.sum_tensor.shape) == (cout, 1, 1, 1) and c.in_channels <= 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = torch.nn.functional.leaky_relu(self.conv(x), negative_slope=0.2) + self.sum_tensor
            return torch.nn.functional.gelu(torch.clamp(y, min=-1.0, max=1.0))
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout = c.out_channels
        do, ho, wo = d - 2, h - 2, w - 2
        bw = triton.next_power_of_2(wo)
        bh = max(1, 256 // bw)
        y = torch.empty(n, cout, do, ho, wo, device=x.device, dtype=x.dtype)
        grid = (n * do, triton.cdiv(ho, bh))
        _conv3_leaky_sum_clamp_gelu_kernel[grid](x, c.weight.contiguous(), c.bias,
                                                 self.sum_tensor.reshape(-1).contiguous(), y, 0.2, d, h, w,
                                                 do, ho, wo, CIN=cin, COUT=cout, BH=bh, BW=bw, num_warps=4)
        return y
