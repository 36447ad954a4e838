"""Building blocks of the kernelbench-v0 solutions that compute a transposed convolution together with its tail in
one Triton kernel (the level-2 ``ConvTranspose{2,3}d_*`` second versions): the per-class implicit-GEMM
accumulators and the GroupNorm statistics passes that follow them.

A stride-``S`` transposed convolution, split by output residue class ``o = S j + r`` per dimension, is one dense
GEMM per class whose reduction axis is (tap that lands on the class, input channel) only (gather form; see
:mod:`cudal1.kernelzoo.blocks.conv_transpose` for the general block with dilation and groups). The accumulators
here return the bias-free fp32 ``(BM, BN)`` tile of one class for a block of class positions, computed with
``tl.dot(..., input_precision="ieee")`` (FMA, no TF32), so that the calling kernel can apply the task's tail to
it in registers before the only write. GroupNorm after such a kernel: the kernel writes per-tile (count, mean,
M2) partials per channel, :func:`groupnorm_merge_partials_kernel` merges them per (sample, group) with Chan's
formula (no E[x^2] - E[x]^2 cancellation), :func:`groupnorm_apply_kernel` normalises in place.
"""

from __future__ import annotations

from .._triton import tl, triton
from .conv_transpose import _class_taps

__all__ = ["convt2d_class_acc", "convt3d_class_acc", "convt3d_program_tile", "groupnorm_apply_kernel",
           "groupnorm_merge_partials_kernel"]


@triton.jit
def convt3d_class_acc(x_ptr, w_ptr, n, jd, jh, jw, mmask, rd, rh, rw, ID, IH, IW, co, cmask,
                      CIN: tl.constexpr, COUT: tl.constexpr, KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                      SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr,
                      PW: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Bias-free transposed conv at the outputs (s jd + rd, s jh + rh, s jw + rw) of sample n for channels co: a
    (BM, BN) fp32 implicit GEMM over (valid tap of the class, input channel) only, FMA (ieee), no TF32.
    x: (N, CIN, ID, IH, IW); w: (KD*KH*KW, CIN, COUT) tap-major, output channels contiguous."""
    k0d, cd = _class_taps(rd, PD, KD, 1, SD)  # the general block's tap rule at dilation 1
    k0h, ch = _class_taps(rh, PH, KH, 1, SH)
    k0w, cw = _class_taps(rw, PW, KW, 1, SW)
    IV = ID * IH * IW
    x_base = x_ptr + n.to(tl.int64) * CIN * IV
    row = (jd * IH + jh) * IW + jw
    cio = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    NCH: tl.constexpr = (CIN + BK - 1) // BK
    for it in range(0, cd * ch * cw * NCH):
        c0 = (it % NCH) * BK
        tt = it // NCH
        tw = tt % cw
        tt = tt // cw
        th = tt % ch
        td = tt // ch
        kd = k0d + td * SD
        kh = k0h + th * SH
        kw = k0w + tw * SW
        # exact divisions (numerators are multiples of S), kept non-negative before dividing
        cdd = (rd + PD - kd + SD * KD) // SD - KD
        chh = (rh + PH - kh + SH * KH) // SH - KH
        cww = (rw + PW - kw + SW * KW) // SW - KW
        rmask = (mmask & (jd + cdd >= 0) & (jd + cdd < ID) & (jh + chh >= 0) & (jh + chh < IH)
                 & (jw + cww >= 0) & (jw + cww < IW))
        ci = c0 + cio
        if CIN % BK == 0:
            am = rmask[:, None]
            bm = cmask[None, :]
        else:
            am = rmask[:, None] & (ci < CIN)[None, :]
            bm = (ci < CIN)[:, None] & cmask[None, :]
        a = tl.load(x_base + (row + (cdd * IH + chh) * IW + cww)[:, None] + (ci * IV)[None, :], mask=am, other=0.0)
        tap = (kd * KH + kh) * KW + kw
        b = tl.load(w_ptr + (tap * CIN + ci)[:, None] * COUT + co[None, :], mask=bm, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    return acc


@triton.jit
def convt3d_program_tile(pid0, JD, JH, JW, OD, OH, OW, SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
                         BM: tl.constexpr):
    """What program ``pid0`` (= class + classes * m-block) of a 3-D per-class kernel owns: its residue class
    ``(rd, rh, rw)``, its ``BM`` class positions ``(jd, jh, jw)`` (class grid ``JD x JH x JW``), their outputs
    ``(od, oh, ow) = S j + r`` and the mask of the positions inside the ``OD x OH x OW`` output."""
    NCLS: tl.constexpr = SD * SH * SW
    cls = pid0 % NCLS
    rw = cls % SW
    rh = (cls // SW) % SH
    rd = cls // (SW * SH)
    m = (pid0 // NCLS) * BM + tl.arange(0, BM)
    jw = m % JW
    t = m // JW
    jh = t % JH
    jd = t // JH
    od = jd * SD + rd
    oh = jh * SH + rh
    ow = jw * SW + rw
    return rd, rh, rw, jd, jh, jw, od, oh, ow, (jd < JD) & (od < OD) & (oh < OH) & (ow < OW)


@triton.jit
def convt2d_class_acc(x_ptr, w_ptr, n, jh, jw, rh, rw, mm, H, W,
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
def groupnorm_merge_partials_kernel(cnt_ptr, mean_ptr, m2_ptr, stat_ptr, n_part, eps, G: tl.constexpr,
                                    COUT: tl.constexpr, CPG: tl.constexpr, BLOCK_PART: tl.constexpr):
    """Program (n * G + g): merge the partials of sample n, channels of group g, into (mean, rstd) at
    ``stat_ptr[2 (n G + g)]``. Partial k of sample n: ``cnt[n n_part + k]`` positions (the same for every channel),
    per-channel ``mean`` / ``m2`` (sum of squared deviations) at ``(n n_part + k) COUT + channel``."""
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    k = tl.arange(0, BLOCK_PART)
    c = tl.arange(0, CPG)
    km = k < n_part
    cnt = tl.load(cnt_ptr + n * n_part + k, mask=km, other=0.0)
    offs = (n * n_part + k[:, None]) * COUT + g * CPG + c[None, :]
    mean = tl.load(mean_ptr + offs, mask=km[:, None], other=0.0)
    m2 = tl.load(m2_ptr + offs, mask=km[:, None], other=0.0)
    total = tl.sum(cnt, 0) * CPG
    gmean = tl.sum(tl.sum(cnt[:, None] * mean, 1), 0) / total
    d = mean - gmean
    gm2 = tl.sum(tl.sum(m2 + cnt[:, None] * d * d, 1), 0)
    tl.store(stat_ptr + pid * 2, gmean)
    tl.store(stat_ptr + pid * 2 + 1, 1.0 / tl.sqrt(gm2 / total + eps))


@triton.jit
def groupnorm_apply_kernel(y_ptr, stat_ptr, gamma_ptr, beta_ptr, inner, C: tl.constexpr, CPG: tl.constexpr,
                           BLOCK: tl.constexpr):
    """In place on y (N, C, inner): (y - mean) * rstd * gamma + beta, program (n * C + c, block)."""
    row = tl.program_id(0)
    c = row % C
    grp = (row // C) * (C // CPG) + c // CPG
    mean = tl.load(stat_ptr + grp * 2)
    rstd = tl.load(stat_ptr + grp * 2 + 1)
    scale = rstd * tl.load(gamma_ptr + c)
    shift = tl.load(beta_ptr + c) - mean * scale
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = s < inner
    offs = row.to(tl.int64) * inner + s
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, v * scale + shift, mask=mask)
