"""Transposed convolution (1-D, 2-D, 3-D; any stride, padding, output padding, dilation, groups; optional bias) as
ONE Triton implicit GEMM, fp32 FMA (``tl.dot(..., input_precision="ieee")``: no TF32), for the KernelBench
level-1 ``conv_transposed_*`` solutions in ``kernelbench_v0``.

Gather form: ``y[n, co, o] = b[co] + sum_{ci, k} x[n, ci, (o + p - k d) / s] w[ci, co, k]`` over the taps ``k``
(per dimension) with ``(o + p - k d) % s == 0`` and the quotient inside the input. Split each output dimension
into its ``s`` residue classes ``o = s j + r``: the valid taps then depend on ``r`` only (an arithmetic
progression ``k0, k0 + q, ...`` with ``q = s / gcd(s, d)``), and the input index is ``j + c(r, k)``. A program
owns one class, one sample and group, a block of ``BM`` class positions and ``BN`` output channels, and runs a
GEMM whose reduction axis is (valid tap, input channel) only: no multiply by an inserted zero (cuDNN's fp32 transposed
convolutions with stride > 1, groups or dilation run far below the GPU's fp32 rate (figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md), and some of these tasks have classes that no tap
reaches at all: they are written as bias / zero without any reduction).
1-D and 2-D inputs are viewed as 3-D with unit leading spatial dimensions (free views).

Elsewhere (CPU, other dtypes) :func:`conv_transpose` runs ``torch.nn.functional.conv_transpose{1,2,3}d``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._triton import tl, triton

__all__ = ["conv_transpose", "conv_transpose_ref", "conv_transpose_triton"]


@triton.jit
def _class_taps(r, P: tl.constexpr, K: tl.constexpr, DIL: tl.constexpr, S: tl.constexpr):
    """First valid tap and the number of valid taps of residue class ``r`` in one dimension."""
    k0 = r * 0 + K
    cnt = r * 0
    for k in tl.static_range(K):
        ok = (r + P - k * DIL + S * K * DIL) % S == 0
        k0 = tl.where(ok & (k0 == K), k, k0)
        cnt += ok.to(tl.int32)
    return k0, cnt


@triton.jit
def _convt_kernel(x_ptr, w_ptr, b_ptr, y_ptr, ID, IH, IW, OD, OH, OW, JD, JH, JW,
                  CIN_G: tl.constexpr, COUT_G: tl.constexpr, G: tl.constexpr,
                  KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                  SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
                  PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                  DD: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr,
                  QD: tl.constexpr, QH: tl.constexpr, QW: tl.constexpr, HAS_BIAS: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """x: (N, G * CIN_G, ID, IH, IW); w: (G, KD*KH*KW, CIN_G, COUT_G) (tap-major, channels last);
    y: (N, G * COUT_G, OD, OH, OW). Program (class + classes * m-block, n * G + g, co-block)."""
    NCLS: tl.constexpr = SD * SH * SW
    pid0 = tl.program_id(0)
    cls = pid0 % NCLS
    mb = pid0 // NCLS
    pid1 = tl.program_id(1)
    n = pid1 // G
    g = pid1 % G
    rw = cls % SW
    rh = (cls // SW) % SH
    rd = cls // (SW * SH)
    k0d, cd = _class_taps(rd, PD, KD, DD, SD)
    k0h, ch = _class_taps(rh, PH, KH, DH, SH)
    k0w, cw = _class_taps(rw, PW, KW, DW, SW)

    m = mb * BM + tl.arange(0, BM)
    jw = m % JW
    t = m // JW
    jh = t % JH
    jd = t // JH
    od = jd * SD + rd
    oh = jh * SH + rh
    ow = jw * SW + rw
    mmask = (jd < JD) & (od < OD) & (oh < OH) & (ow < OW)
    co = tl.program_id(2) * BN + tl.arange(0, BN)
    cmask = co < COUT_G

    IV = ID * IH * IW
    x_base = x_ptr + (n * G + g).to(tl.int64) * CIN_G * IV
    w_base = w_ptr + g * (KD * KH * KW * CIN_G * COUT_G)
    row = (jd * IH + jh) * IW + jw
    cio = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    NCH: tl.constexpr = (CIN_G + BK - 1) // BK
    for it in range(0, cd * ch * cw * NCH):
        # scalar decomposition: (tap of this class, input-channel chunk)
        c0 = (it % NCH) * BK
        tt = it // NCH
        tw = tt % cw
        tt = tt // cw
        th = tt % ch
        td = tt // ch
        kd = k0d + td * QD
        kh = k0h + th * QH
        kw = k0w + tw * QW
        # exact divisions (the numerators are multiples of S), kept non-negative before dividing
        cdd = (rd + PD - kd * DD + SD * KD * DD) // SD - KD * DD
        chh = (rh + PH - kh * DH + SH * KH * DH) // SH - KH * DH
        cww = (rw + PW - kw * DW + SW * KW * DW) // SW - KW * DW
        rmask = (mmask & (jd + cdd >= 0) & (jd + cdd < ID) & (jh + chh >= 0) & (jh + chh < IH)
                 & (jw + cww >= 0) & (jw + cww < IW))
        ci = c0 + cio
        if CIN_G % BK == 0:
            am = rmask[:, None]
            bm = cmask[None, :]
        else:
            am = rmask[:, None] & (ci < CIN_G)[None, :]
            bm = (ci < CIN_G)[:, None] & cmask[None, :]
        a = tl.load(x_base + (row + (cdd * IH + chh) * IW + cww)[:, None] + (ci * IV)[None, :], mask=am, other=0.0)
        tap = (kd * KH + kh) * KW + kw
        b = tl.load(w_base + (tap * CIN_G + ci)[:, None] * COUT_G + co[None, :], mask=bm, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(b_ptr + g * COUT_G + co, mask=cmask, other=0.0)[None, :]
    OV = OD * OH * OW
    y_rows = (n * G + g).to(tl.int64) * COUT_G + co
    y_off = y_rows[None, :] * OV + ((od * OH + oh) * OW + ow)[:, None]
    tl.store(y_ptr + y_off, acc, mask=mmask[:, None] & cmask[None, :])


def _triple(v, nd: int) -> tuple[int, ...]:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    return (1,) * (3 - nd) + t


def conv_transpose_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                       output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """``torch.nn.functional.conv_transpose{1,2,3}d`` by the input's rank."""
    fn = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[x.dim()]
    return fn(x, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                          output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """The Triton kernel, unconditionally (CUDA, or CPU tensors under ``TRITON_INTERPRET=1``).
    x: (N, Cin, *spatial) with 1-3 spatial dims, weight: (Cin, Cout / groups, *kernel) fp32."""
    nd = x.dim() - 2
    sp = (1,) * (3 - nd) + tuple(x.shape[2:])
    ks = (1,) * (3 - nd) + tuple(weight.shape[2:])
    s, p = _triple(stride, nd), (0,) * (3 - nd) + _triple(padding, nd)[3 - nd:]
    op, d = (0,) * (3 - nd) + _triple(output_padding, nd)[3 - nd:], _triple(dilation, nd)
    out = tuple((i - 1) * s_ - 2 * p_ + d_ * (k - 1) + op_ + 1
                for i, s_, p_, d_, k, op_ in zip(sp, s, p, d, ks, op, strict=True))
    n, cin = x.shape[:2]
    cout_g = weight.shape[1]
    cin_g = cin // groups
    taps = ks[0] * ks[1] * ks[2]
    # (G, taps, Cin/G, Cout/G): one reduction row per (tap, input channel), output channels contiguous
    w = weight.reshape(groups, cin_g, cout_g, taps).permute(0, 3, 1, 2).contiguous()
    y = torch.empty((n, groups * cout_g) + out[3 - nd:], device=x.device, dtype=x.dtype)
    js = tuple(-(-o // s_) for o, s_ in zip(out, s, strict=True))
    bn = min(64, max(16, triton.next_power_of_2(cout_g)))
    # no register spills on sm90 with these (ptxas: <= 184 registers)
    bk = 16  # Triton 3.6 compiles an fp32 tl.dot only with K >= 16 (fewer input channels are masked)
    bm = 128 if js[0] * js[1] * js[2] >= 4096 else 64
    ncls = s[0] * s[1] * s[2]
    grid = (ncls * triton.cdiv(js[0] * js[1] * js[2], bm), n * groups, triton.cdiv(cout_g, bn))
    q = tuple(s_ // math.gcd(s_, d_) for s_, d_ in zip(s, d, strict=True))
    _convt_kernel[grid](x.contiguous(), w, bias if bias is not None else w, y, *sp, *out, *js,
                        CIN_G=cin_g, COUT_G=cout_g, G=groups, KD=ks[0], KH=ks[1], KW=ks[2],
                        SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2], DD=d[0], DH=d[1], DW=d[2],
                        QD=q[0], QH=q[1], QW=q[2], HAS_BIAS=bias is not None, BM=bm, BN=bn, BK=bk,
                        num_warps=8 if bn >= 64 else 4, num_stages=3)
    return y


def conv_transpose(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                   output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """Transposed convolution with ``torch.nn.functional.conv_transpose{1,2,3}d``'s arguments: the Triton
    kernel for fp32 CUDA tensors, the PyTorch function elsewhere (same math)."""
    if not (x.is_cuda and x.dtype == torch.float32 and weight.dtype == torch.float32 and 3 <= x.dim() <= 5
            and (bias is None or bias.dtype == torch.float32)):
        return conv_transpose_ref(x, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv_transpose_triton(x, weight, bias, stride, padding, output_padding, groups, dilation)
