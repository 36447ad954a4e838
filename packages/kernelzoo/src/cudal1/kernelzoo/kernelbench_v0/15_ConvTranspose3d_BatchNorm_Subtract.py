"""KernelBench level 2, 15_ConvTranspose3d_BatchNorm_Subtract, second version (x: (16, 16, 16, 32, 32) fp32;
ConvTranspose3d(16 -> 32, k=3, stride 2, padding 1) -> (16, 32, 31, 63, 63), 252 MB; BatchNorm3d(32); subtract
the mean over (D, H, W), keepdim). The harness evaluates in eval mode: the batch norm is the per-channel affine
map y = a_c (v + bias_c - running_mean_c) + beta_c with a_c = weight_c / sqrt(running_var_c + eps) (in training
mode this file runs the modules themselves).

Exact algebra (every input and parameter value): y - mean_s(y) = a_c (v - mean_s(v)) with v the bias-free
convolution; the conv bias, running mean and beta cancel. The first version (kernelbench_v0/15_...) left the
transposed convolution in cuDNN (6.8 GFLOP, most of its time). Here:
1. ONE Triton kernel computes the transposed convolution as one fp32 implicit GEMM per stride-residue class (the
   gather form of ``cudal1.kernelzoo.blocks.conv_transpose``: per output parity class only the taps that land
   there, 27/8 of 27 on average, reduction over (valid tap, input channel); ``tl.dot(input_precision="ieee")``:
   FMA, no TF32), a program owning 128 class positions and all 32 channels; it writes v once and its
   per-channel partial sum of v (one float per channel and program: 1024 per (sample, channel));
2. one in-place pass per (sample, channel) chunk adds that plane's partial sums into mean_s(v) and writes
   a_c (v - mean) (252 MB read + write).
The block runs these convolutions well above cuDNN's rate on other shapes (the reductions are short here, 16-128
per class, so it may run slower on this one).

Other configurations (CPU, other dtypes, groups, dilation, training mode) run the same math in PyTorch.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.convt_fused import convt3d_class_acc, convt3d_program_tile


@triton.jit
def _convt_sum_kernel(x_ptr, w_ptr, y_ptr, part_ptr, ID, IH, IW, OD, OH, OW, JD, JH, JW,
                      CIN: tl.constexpr, COUT: tl.constexpr, KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                      SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr,
                      PW: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Program (class + classes * m-block, sample, channel block): bias-free conv v, stored, and its per-channel
    sum over the program's positions into part[(n * COUT + c) * NPART + program]."""
    pid0 = tl.program_id(0)
    rd, rh, rw, jd, jh, jw, od, oh, ow, mmask = convt3d_program_tile(pid0, JD, JH, JW, OD, OH, OW, SD, SH, SW, BM)
    n = tl.program_id(1)
    co = tl.program_id(2) * BN + tl.arange(0, BN)
    cmask = co < COUT
    acc = convt3d_class_acc(x_ptr, w_ptr, n, jd, jh, jw, mmask, rd, rh, rw, ID, IH, IW, co, cmask, CIN, COUT,
                            KD, KH, KW, SD, SH, SW, PD, PH, PW, BM, BN, BK)
    omask = mmask[:, None] & cmask[None, :]
    OV = OD * OH * OW
    y_off = (n.to(tl.int64) * COUT + co)[None, :] * OV + ((od * OH + oh) * OW + ow)[:, None]
    tl.store(y_ptr + y_off, acc, mask=omask)
    psum = tl.sum(tl.where(omask, acc, 0.0), 0)
    tl.store(part_ptr + (n * COUT + co) * tl.num_programs(0) + pid0, psum, mask=cmask)


@triton.jit
def _center_scale_kernel(y_ptr, part_ptr, rv_ptr, w_ptr, eps, C, plane, n_part, CHUNK: tl.constexpr,
                         BLOCK: tl.constexpr, BLOCK_P: tl.constexpr):
    """Program (sample * C + channel, chunk): y = a_c (v - mean(v)) in place on the chunk of the plane."""
    row = tl.program_id(0)
    c = row % C
    k = tl.arange(0, BLOCK_P)
    mean = tl.sum(tl.load(part_ptr + row * n_part + k, mask=k < n_part, other=0.0), 0) / plane
    a = tl.load(w_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    base = y_ptr + row.to(tl.int64) * plane
    start0 = tl.program_id(1) * CHUNK
    for start in range(start0, start0 + CHUNK, BLOCK):
        o = start + tl.arange(0, BLOCK)
        msk = o < plane
        v = tl.load(base + o, mask=msk, other=0.0)
        tl.store(base + o, (v - mean) * a, mask=msk)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, bias=bias)
        self.batch_norm = nn.BatchNorm3d(out_channels)

    def _fits(self, x: torch.Tensor) -> bool:
        ct, bn = self.conv_transpose, self.batch_norm
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.weight.dtype == torch.float32
                and ct.groups == 1 and tuple(ct.dilation) == (1, 1, 1) and ct.padding_mode == "zeros"
                and not bn.training and bn.affine and bn.running_var is not None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.batch_norm(self.conv_transpose(x))
            return y - torch.mean(y, dim=(2, 3, 4), keepdim=True)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct, bnm = self.conv_transpose, self.batch_norm
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
        bn = min(64, max(16, triton.next_power_of_2(cout)))
        bm = 128 if js[0] * js[1] * js[2] >= 4096 else 64
        grid = (s[0] * s[1] * s[2] * triton.cdiv(js[0] * js[1] * js[2], bm), n, triton.cdiv(cout, bn))
        part = torch.empty((n, cout, grid[0]), device=x.device, dtype=torch.float32)
        _convt_sum_kernel[grid](x, w, y, part, *sp, *out, *js, CIN=cin, COUT=cout, KD=ks[0], KH=ks[1], KW=ks[2],
                                SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2], BM=bm, BN=bn, BK=16,
                                num_warps=8 if bn >= 64 else 4, num_stages=3)
        plane = out[0] * out[1] * out[2]
        block = 1024
        chunk = block * max(1, min(16, triton.cdiv(plane, block)))
        _center_scale_kernel[(n * cout, triton.cdiv(plane, chunk))](
            y, part, bnm.running_var, bnm.weight, bnm.eps, cout, plane, grid[0], CHUNK=chunk, BLOCK=block,
            BLOCK_P=triton.next_power_of_2(grid[0]), num_warps=4)
        return y
