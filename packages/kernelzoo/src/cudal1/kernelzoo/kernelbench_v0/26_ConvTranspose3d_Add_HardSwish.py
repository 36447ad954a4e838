"""KernelBench level 2, 26_ConvTranspose3d_Add_HardSwish, second version (x: (128, 32, 16, 16, 16), add_input:
(128, 64, 32, 32, 32) fp32; ConvTranspose3d(32 -> 64, k=3, stride 2, pad 1, output_pad 1) -> v (1.07 GB);
``z = v + add_input``; ``z * hardswish(z)``; the task's own ``bias`` parameter is never used by its forward).

The first version (kernelbench_v0/26_...) left the transposed convolution in cuDNN (58 GFLOP at a low rate, most
of its time) and fused only the tail. Here ONE Triton kernel does
everything: the transposed convolution as one fp32 implicit GEMM per stride-residue class (the gather form of
``cudal1.kernelzoo.blocks.conv_transpose``: per output parity class only the taps that land there, 27/8 of 27 on
average, reduction over (valid tap, input channel); ``tl.dot(input_precision="ieee")``: FMA, no TF32), all 64
output channels of a block of 128 class positions per program, then conv bias, the add_input tile (read once)
and ``z * (z * clamp(z + 3, 0, 6) / 6)`` in registers, and one write of the output. The block runs these
convolutions well above cuDNN's rate, so what remains is the 58 GFLOP at that rate plus 2.1 GB of traffic
(add_input read, output write).

Other configurations (CPU, other dtypes, groups, dilation) run the same math in PyTorch.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.convt_fused import convt3d_class_acc, convt3d_program_tile


@triton.jit
def _convt_tail_kernel(x_ptr, w_ptr, cb_ptr, a_ptr, y_ptr, ID, IH, IW, OD, OH, OW, JD, JH, JW,
                       CIN: tl.constexpr, COUT: tl.constexpr, KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                       SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr,
                       PW: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Program (class + classes * m-block, sample, channel block): conv + bias, then the task's tail, stored."""
    rd, rh, rw, jd, jh, jw, od, oh, ow, mmask = convt3d_program_tile(tl.program_id(0), JD, JH, JW, OD, OH, OW,
                                                                     SD, SH, SW, BM)
    n = tl.program_id(1)
    co = tl.program_id(2) * BN + tl.arange(0, BN)
    cmask = co < COUT
    acc = convt3d_class_acc(x_ptr, w_ptr, n, jd, jh, jw, mmask, rd, rh, rw, ID, IH, IW, co, cmask, CIN, COUT,
                            KD, KH, KW, SD, SH, SW, PD, PH, PW, BM, BN, BK)
    v = acc + tl.load(cb_ptr + co, mask=cmask, other=0.0)[None, :]
    OV = OD * OH * OW
    y_off = (n.to(tl.int64) * COUT + co)[None, :] * OV + ((od * OH + oh) * OW + ow)[:, None]
    omask = mmask[:, None] & cmask[None, :]
    z = v + tl.load(a_ptr + y_off, mask=omask, other=0.0)
    out = z * (z * tl.minimum(tl.maximum(z + 3.0, 0.0), 6.0) / 6.0)
    tl.store(y_ptr + y_off, out, mask=omask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))  # unused by the task's forward; kept for its name

    def _fits(self, x: torch.Tensor, add_input: torch.Tensor) -> bool:
        ct = self.conv_transpose
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.weight.dtype == torch.float32
                and add_input.dtype == torch.float32 and ct.groups == 1 and tuple(ct.dilation) == (1, 1, 1)
                and ct.bias is not None
                and ct.padding_mode == "zeros")

    def forward(self, x: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
        if not self._fits(x, add_input):
            z = self.conv_transpose(x) + add_input
            return z * F.hardswish(z)
        return self._fused(x, add_input)

    def _fused(self, x: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin = x.shape[:2]
        sp = tuple(x.shape[2:])
        ks, s, p, op = tuple(ct.kernel_size), tuple(ct.stride), tuple(ct.padding), tuple(ct.output_padding)
        out = tuple((i - 1) * s_ - 2 * p_ + k + o_ for i, s_, p_, k, o_ in zip(sp, s, p, ks, op, strict=True))
        js = tuple(-(-o // s_) for o, s_ in zip(out, s, strict=True))
        cout = ct.out_channels
        # (taps, Cin, Cout): one reduction row per (tap, input channel), output channels contiguous
        w = ct.weight.reshape(cin, cout, ks[0] * ks[1] * ks[2]).permute(2, 0, 1).contiguous()
        y = torch.empty((n, cout) + out, device=x.device, dtype=x.dtype)
        if tuple(add_input.shape) != tuple(y.shape):  # broadcasting add: same math in PyTorch
            z = F.conv_transpose3d(x, ct.weight, ct.bias, s, p, op) + add_input
            return z * F.hardswish(z)
        bn = min(64, max(16, triton.next_power_of_2(cout)))
        bm = 128 if js[0] * js[1] * js[2] >= 4096 else 64
        grid = (s[0] * s[1] * s[2] * triton.cdiv(js[0] * js[1] * js[2], bm), n, triton.cdiv(cout, bn))
        _convt_tail_kernel[grid](x, w, ct.bias, add_input.contiguous(), y, *sp, *out, *js, CIN=cin, COUT=cout,
                                 KD=ks[0], KH=ks[1], KW=ks[2], SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1],
                                 PW=p[2], BM=bm, BN=bn, BK=16, num_warps=8 if bn >= 64 else 4, num_stages=3)
        return y
