"""KernelBench level 2, 91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid (x: (128, 32, 16, 16) fp32;
ConvTranspose2d(32 -> 64, k=4, stride 2, padding 1, output_padding 1) -> (128, 64, 33, 33), 36 MB; softmax over
the 64 channels; ``+ bias`` (64, 1, 1); ``* scaling_factor``; sigmoid).

ONE Triton kernel does the whole model, the transposed convolution included. Eager runs cuDNN's fp32 dgrad
kernel for the transposed convolution (most of the reference's time: 2.2 GFLOP at a low rate; a cuDNN conv plus
one fused Triton tail was at parity with eager), then the channel softmax,
add, multiply and sigmoid, each reading and writing 36 MB. Here each output (oh, ow) parity class is a plain
implicit GEMM: for stride 2 and a 4x4 kernel only the 2x2 taps of matching parity reach an output, so the
reduction axis is (tap, input channel) = 4x32 with no multiply by an inserted zero. A program owns one class
and 128 class positions flattened over (sample, row, column), and all 64 output channels, so the whole tail runs
on the accumulator tile in registers: conv bias, softmax over the channel axis of the tile, bias, scale,
sigmoid, then the only write of the output. The GEMM is ``tl.dot(input_precision="ieee")``: fp32 FMA, no TF32
(the shared transposed-conv block with this scheme runs it at a far higher rate than cuDNN's dgrad kernel). The
GPU work is 2.4 GFLOP with the class edges, plus the 36 MB write.

Other configurations (CPU, other dtypes, groups or dilation, more than 64 output channels) run the same math in
PyTorch.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _convt2d_class_acc(x_ptr, w_ptr, n, jh, jw, rh, rw, mm, H, W,
                       CIN: tl.constexpr, COUT: tl.constexpr, K: tl.constexpr, S: tl.constexpr, P: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Transposed conv (groups 1, dilation 1), bias not added, at outputs (S jh + rh, S jw + rw) of samples ``n``
    (rows masked by ``mm``) for output channels 0..BN-1: a (BM, BN) fp32 tile. Gather form: input row
    ``(oh + P - kh) / S`` for the taps ``kh = (rh + P) % S + S t`` only (the others never divide exactly).
    w is the weight permuted to (K, K, CIN, COUT)."""
    kh0 = (rh + P) % S
    kw0 = (rw + P) % S
    nkw = (K - kw0 + S - 1) // S
    nkh = (K - kh0 + S - 1) // S
    co = tl.arange(0, BN)
    cmask = co < COUT
    cio = tl.arange(0, BK)
    HW = H * W
    xrow = n.to(tl.int64) * (CIN * HW)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    NCH: tl.constexpr = (CIN + BK - 1) // BK
    for it in range(0, nkh * nkw * NCH):
        c0 = (it % NCH) * BK
        tt = it // NCH
        kw = kw0 + (tt % nkw) * S
        kh = kh0 + (tt // nkw) * S
        # exact divisions (the numerators are multiples of S), kept non-negative before dividing
        dh = (rh + P - kh + S * K) // S - K
        dw = (rw + P - kw + S * K) // S - K
        ih = jh + dh
        iw = jw + dw
        rmask = mm & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        ci = c0 + cio
        if CIN % BK == 0:
            am = rmask[:, None]
            bm = cmask[None, :]
        else:
            am = rmask[:, None] & (ci < CIN)[None, :]
            bm = (ci < CIN)[:, None] & cmask[None, :]
        a = tl.load(x_ptr + xrow[:, None] + (ih * W + iw)[:, None] + (ci * HW)[None, :], mask=am, other=0.0)
        b = tl.load(w_ptr + ((kh * K + kw) * CIN + ci)[:, None] * COUT + co[None, :], mask=bm, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    return acc


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, y_ptr, NB, H, W, OH, OW, JH, JW, scale,
                  CIN: tl.constexpr, COUT: tl.constexpr, K: tl.constexpr, S: tl.constexpr, P: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Program (block of BM class positions, class): conv, conv bias, channel softmax, bias, scale, sigmoid."""
    cls = tl.program_id(1)
    rh = cls // S
    rw = cls % S
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    jw = m % JW
    t = m // JW
    jh = t % JH
    n = t // JH
    oh = jh * S + rh
    ow = jw * S + rw
    mm = (n < NB) & (oh < OH) & (ow < OW)
    acc = _convt2d_class_acc(x_ptr, w_ptr, n, jh, jw, rh, rw, mm, H, W, CIN, COUT, K, S, P, BM, BN, BK)
    co = tl.arange(0, BN)
    cmask = co < COUT
    v = acc + tl.load(cb_ptr + co, mask=cmask, other=0.0)[None, :]
    v = tl.where(cmask[None, :], v, -float("inf"))
    e = tl.exp(v - tl.max(v, 1)[:, None])
    p = e / tl.sum(e, 1)[:, None]
    z = (p + tl.load(b_ptr + co, mask=cmask, other=0.0)[None, :]) * scale
    out = 1.0 / (1.0 + tl.exp(-z))
    y_off = ((n.to(tl.int64) * COUT)[:, None] + co[None, :]) * (OH * OW) + (oh * OW + ow)[:, None]
    tl.store(y_ptr + y_off, out, mask=mm[:, None] & cmask[None, :])


def fused_forward(x: torch.Tensor, weight: torch.Tensor, conv_bias: torch.Tensor, bias: torch.Tensor, stride: int,
                  padding: int, output_padding: int, scale: float) -> torch.Tensor:
    """``sigmoid((softmax(conv_transpose2d(x, weight, conv_bias, stride, padding, output_padding), 1) + bias)
    * scale)`` in one launch (CUDA, or CPU tensors under TRITON_INTERPRET=1). x: (N, Cin, H, W) fp32, weight:
    (Cin, Cout, K, K), conv_bias and bias: Cout values."""
    x = x.contiguous()
    nb, cin, h, w = x.shape
    cout, k = weight.shape[1], weight.shape[2]
    s, p = stride, padding
    oh, ow = (h - 1) * s - 2 * p + k + output_padding, (w - 1) * s - 2 * p + k + output_padding
    jh, jw = -(-oh // s), -(-ow // s)
    wt = weight.permute(2, 3, 0, 1).contiguous()  # (K, K, Cin, Cout): one reduction row per (tap, channel)
    y = torch.empty((nb, cout, oh, ow), device=x.device, dtype=x.dtype)
    bm = 128
    grid = (triton.cdiv(nb * jh * jw, bm), s * s)
    _fused_kernel[grid](x, wt, conv_bias.reshape(-1), bias.reshape(-1), y, nb, h, w, oh, ow, jh, jw, float(scale),
                        CIN=cin, COUT=cout, K=k, S=s, P=p, BM=bm, BN=max(16, triton.next_power_of_2(cout)), BK=16,
                        num_warps=8, num_stages=3)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape,
                 scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.weight.dtype == torch.float32
                and ct.bias is not None and ct.groups == 1 and ct.dilation == (1, 1)
                and ct.kernel_size[0] == ct.kernel_size[1] and ct.stride[0] == ct.stride[1]
                and ct.padding[0] == ct.padding[1] and ct.output_padding[0] == ct.output_padding[1]
                and ct.out_channels <= 64 and self.bias.numel() == ct.out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not self._fits(x):
            v = torch.softmax(F.conv_transpose2d(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding,
                                                 ct.groups, ct.dilation), dim=1)
            return torch.sigmoid((v + self.bias) * self.scaling_factor)
        return fused_forward(x, ct.weight, ct.bias, self.bias, ct.stride[0], ct.padding[0], ct.output_padding[0],
                             self.scaling_factor)
