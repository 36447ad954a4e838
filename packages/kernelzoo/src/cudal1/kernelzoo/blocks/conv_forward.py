"""Forward convolution (1-D, 2-D, 3-D; any stride, padding, dilation, groups; optional bias) as ONE Triton
implicit GEMM, fp32 FMA (``tl.dot(..., input_precision="ieee")``: no TF32), for the KernelBench level-1
``conv_standard_*`` solutions in ``kernelbench_v0``; and a fused depthwise + pointwise 2-D convolution for few
input channels (:func:`depthwise_pointwise`).

Implicit GEMM: ``y[n, co, o] = b[co] + sum_{ci, k} x[n, ci, o s - p + k d] w[co, ci, k]``. M = output positions of
one sample and group, N = output channels, and the reduction axis is the flattened ``(ci, kd, kh, kw)`` index of
the weight's own layout (so the weight is read in place, no permuted copy per call). The A tile is gathered from
the input by per-row base offsets plus per-column tap offsets; taps in the padding are masked (only compiled in
when there is padding: without it every tap of a valid output lies inside the input). Flattening channels and
taps together matters for the KernelBench shapes, which have 3 input channels: K = 3 x taps is padded only to
the next multiple of 16/32 (27 -> 32, 315 -> 320), where a tap-major loop with channel chunks (as in
``blocks.conv_transpose``) would pad 3 channels to 16 per tap (5.3x the work). cuDNN runs these fp32 3-D
convolutions with the generic ``implicit_convolveNd_sgemm`` / ``xmma ... 128x32x8`` kernels at 12-14 TFLOP/s on an
H100; the same Triton FMA GEMM reached 15-33 TFLOP/s in ``conv_transpose``. 1-D and 2-D inputs are addressed as
3-D with unit leading spatial dimensions (no copy).

:func:`depthwise_pointwise`: ``pointwise(depthwise(x))`` (either part optional) in one pass for few channels: each
program computes the depthwise outputs of all ``C`` channels for a block of positions in registers, then the
``C -> Cout`` channel mix as ``C`` rank-1 updates, and writes all output channels: the run is bound by writing the
output once (cuDNN's 1x1 fp32 convolution with 3 input channels runs its 256x64x8 GEMM tile at about a third of
the H100's memory bandwidth).

Elsewhere (CPU, other dtypes) both run ``torch.nn.functional.conv{1,2,3}d``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._triton import tl, triton

__all__ = ["conv_forward", "conv_forward_ref", "conv_forward_triton", "depthwise_pointwise",
           "depthwise_pointwise_ref", "depthwise_pointwise_triton"]


@triton.jit
def _conv_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, ID, IH, IW, OD, OH, OW,
                     CIN_G: tl.constexpr, COUT_G: tl.constexpr, G: tl.constexpr,
                     KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                     SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
                     PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                     DD: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr, PAD: tl.constexpr,
                     HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """x: (N, G * CIN_G, ID, IH, IW); w: (G * COUT_G, CIN_G, KD, KH, KW) contiguous; y: (N, G * COUT_G, OD, OH, OW).
    PAD: any padding (else no tap of a valid output leaves the input). Program (m-block, n * G + g, co-block)."""
    TAPS: tl.constexpr = KD * KH * KW
    KTOT: tl.constexpr = CIN_G * TAPS
    pid1 = tl.program_id(1)
    n = pid1 // G
    g = pid1 % G
    OV = OD * OH * OW
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    mmask = m < OV
    ow = m % OW
    t = m // OW
    oh = t % OH
    od = t // OH
    id0 = od * SD - PD
    ih0 = oh * SH - PH
    iw0 = ow * SW - PW
    row = (id0 * IH + ih0) * IW + iw0
    co = tl.program_id(2) * BN + tl.arange(0, BN)
    cmask = co < COUT_G

    IV = ID * IH * IW
    x_base = x_ptr + (n * G + g).to(tl.int64) * CIN_G * IV
    w_base = w_ptr + g * (COUT_G * KTOT)
    kk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, KTOT, BK):
        k = k0 + kk
        kmask = k < KTOT
        ci = k // TAPS
        tap = k % TAPS
        kw = tap % KW
        kh = (tap // KW) % KH
        kd = tap // (KW * KH)
        col = ci * IV + (kd * (DD * IH) + kh * DH) * IW + kw * DW
        am = mmask[:, None] & kmask[None, :]
        if PAD:
            di = id0[:, None] + (kd * DD)[None, :]
            hi = ih0[:, None] + (kh * DH)[None, :]
            wi = iw0[:, None] + (kw * DW)[None, :]
            am = am & (di >= 0) & (di < ID) & (hi >= 0) & (hi < IH) & (wi >= 0) & (wi < IW)
        a = tl.load(x_base + row[:, None] + col[None, :], mask=am, other=0.0)
        b = tl.load(w_base + co[None, :] * KTOT + k[:, None], mask=kmask[:, None] & cmask[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(b_ptr + g * COUT_G + co, mask=cmask, other=0.0)[None, :]
    y_rows = (n * G + g).to(tl.int64) * COUT_G + co
    tl.store(y_ptr + y_rows[None, :] * OV + m[:, None], acc, mask=mmask[:, None] & cmask[None, :])


def _triple(v, nd: int) -> tuple[int, ...]:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    return t


def conv_forward_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                     dilation=1, groups: int = 1) -> torch.Tensor:
    """``torch.nn.functional.conv{1,2,3}d`` by the input's rank."""
    fn = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.dim()]
    return fn(x, weight, bias, stride, padding, dilation, groups)


def conv_forward_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                        dilation=1, groups: int = 1) -> torch.Tensor:
    """The Triton kernel, unconditionally (CUDA, or CPU tensors under ``TRITON_INTERPRET=1``).
    x: (N, Cin, *spatial) with 1-3 spatial dims, weight: (Cout, Cin / groups, *kernel) fp32; numeric padding only."""
    nd = x.dim() - 2
    lead = (1,) * (3 - nd)
    sp = lead + tuple(x.shape[2:])
    ks = lead + tuple(weight.shape[2:])
    s = lead + _triple(stride, nd)
    p = (0,) * (3 - nd) + _triple(padding, nd)
    d = lead + _triple(dilation, nd)
    out = tuple((i + 2 * p_ - d_ * (k - 1) - 1) // s_ + 1 for i, s_, p_, d_, k in zip(sp, s, p, d, ks, strict=True))
    n, cin = x.shape[:2]
    cout = weight.shape[0]
    cin_g, cout_g = cin // groups, cout // groups
    ktot = cin_g * ks[0] * ks[1] * ks[2]
    y = torch.empty((n, cout) + out[3 - nd:], device=x.device, dtype=x.dtype)
    ov = out[0] * out[1] * out[2]
    if y.numel() == 0:
        return y
    bn = min(64, max(16, triton.next_power_of_2(cout_g)))
    # K tile >= 16 (Triton 3.6 compiles an fp32 tl.dot only with K >= 16); 32 where that pads no more than 16 does
    bk = 32 if triton.cdiv(ktot, 32) * 32 <= triton.cdiv(ktot, 16) * 16 else 16
    bm = 128 if ov >= 4096 else 64
    grid = (triton.cdiv(ov, bm), n * groups, triton.cdiv(cout_g, bn))
    _conv_fwd_kernel[grid](x.contiguous(), weight.contiguous(), bias if bias is not None else weight, y, *sp, *out,
                           CIN_G=cin_g, COUT_G=cout_g, G=groups, KD=ks[0], KH=ks[1], KW=ks[2],
                           SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2], DD=d[0], DH=d[1], DW=d[2],
                           PAD=any(p), HAS_BIAS=bias is not None, BM=bm, BN=bn, BK=bk,
                           num_warps=8 if bn >= 64 else 4, num_stages=3)
    return y


def _usable(x: torch.Tensor, *ts: torch.Tensor | None) -> bool:
    return x.is_cuda and all(t is None or t.dtype == torch.float32 for t in (x, *ts))


def conv_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                 dilation=1, groups: int = 1) -> torch.Tensor:
    """Convolution with ``torch.nn.functional.conv{1,2,3}d``'s arguments (numeric padding): the Triton kernel for
    fp32 CUDA tensors, the PyTorch function elsewhere (same math)."""
    if not (_usable(x, weight, bias) and 3 <= x.dim() <= 5 and not isinstance(padding, str)):
        return conv_forward_ref(x, weight, bias, stride, padding, dilation, groups)
    return conv_forward_triton(x, weight, bias, stride, padding, dilation, groups)


@triton.jit
def _dw_pw_kernel(x_ptr, dw_ptr, dwb_ptr, pw_ptr, pwb_ptr, y_ptr, H, W, OH, OW,
                  C: tl.constexpr, COUT: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                  SH: tl.constexpr, SW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                  DH: tl.constexpr, DW: tl.constexpr, HAS_DW: tl.constexpr, HAS_DWB: tl.constexpr,
                  HAS_PWB: tl.constexpr, BP: tl.constexpr, BCO: tl.constexpr):
    """x: (N, C, H, W); dw: (C, 1, KH, KW); pw: (COUT, C, 1, 1); y: (N, COUT, OH, OW).
    Program (position block, n, co-block)."""
    n = tl.program_id(1)
    OHW = OH * OW
    p = tl.program_id(0) * BP + tl.arange(0, BP)
    pmask = p < OHW
    ow = p % OW
    oh = p // OW
    co = tl.program_id(2) * BCO + tl.arange(0, BCO)
    cmask = co < COUT
    x_n = x_ptr + n.to(tl.int64) * C * H * W
    acc = tl.zeros([BP, BCO], dtype=tl.float32)
    for c in tl.static_range(C):
        if HAS_DW:
            z = tl.zeros([BP], dtype=tl.float32)
            for kh in tl.static_range(KH):
                ih = oh * SH - PH + kh * DH
                hok = pmask & (ih >= 0) & (ih < H)
                for kw in tl.static_range(KW):
                    iw = ow * SW - PW + kw * DW
                    xv = tl.load(x_n + (c * H + ih) * W + iw, mask=hok & (iw >= 0) & (iw < W), other=0.0)
                    z += tl.load(dw_ptr + (c * KH + kh) * KW + kw) * xv
            if HAS_DWB:
                z += tl.load(dwb_ptr + c)
        else:
            z = tl.load(x_n + c * (H * W) + p, mask=pmask, other=0.0)
        wc = tl.load(pw_ptr + co * C + c, mask=cmask, other=0.0)
        acc += z[:, None] * wc[None, :]
    if HAS_PWB:
        acc += tl.load(pwb_ptr + co, mask=cmask, other=0.0)[None, :]
    y_rows = n.to(tl.int64) * COUT + co
    tl.store(y_ptr + y_rows[None, :] * OHW + p[:, None], acc, mask=pmask[:, None] & cmask[None, :])


def depthwise_pointwise_ref(x: torch.Tensor, dw_weight: torch.Tensor | None, dw_bias: torch.Tensor | None,
                            pw_weight: torch.Tensor, pw_bias: torch.Tensor | None, stride=1, padding=0,
                            dilation=1) -> torch.Tensor:
    """``conv2d(conv2d(x, dw_weight, dw_bias, stride, padding, dilation, groups=C), pw_weight, pw_bias)``; without
    ``dw_weight`` just the pointwise (1x1) convolution."""
    if dw_weight is not None:
        x = F.conv2d(x, dw_weight, dw_bias, stride, padding, dilation, x.shape[1])
    return F.conv2d(x, pw_weight, pw_bias)


def depthwise_pointwise_triton(x: torch.Tensor, dw_weight: torch.Tensor | None, dw_bias: torch.Tensor | None,
                               pw_weight: torch.Tensor, pw_bias: torch.Tensor | None, stride=1, padding=0,
                               dilation=1) -> torch.Tensor:
    """The Triton kernel, unconditionally (CUDA, or CPU tensors under ``TRITON_INTERPRET=1``). x: (N, C, H, W)
    with few channels (the channel loop is unrolled), dw_weight: (C, 1, KH, KW) or None, pw_weight: (Cout, C, 1, 1)."""
    n, c, h, w = x.shape
    cout = pw_weight.shape[0]
    if dw_weight is not None:
        kh, kw = dw_weight.shape[2:]
        (sh, sw), (ph, pw), (dh, dwl) = _triple(stride, 2), _triple(padding, 2), _triple(dilation, 2)
        oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dwl * (kw - 1) - 1) // sw + 1
    else:
        kh = kw = sh = sw = dh = dwl = 1
        ph = pw = 0
        oh, ow = h, w
    y = torch.empty((n, cout, oh, ow), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    bco = min(64, triton.next_power_of_2(cout))
    bp = 256
    grid = (triton.cdiv(oh * ow, bp), n, triton.cdiv(cout, bco))
    dw = dw_weight.contiguous() if dw_weight is not None else pw_weight
    _dw_pw_kernel[grid](x.contiguous(), dw, dw_bias if dw_bias is not None else dw, pw_weight.contiguous(),
                        pw_bias if pw_bias is not None else dw, y, h, w, oh, ow, C=c, COUT=cout, KH=kh, KW=kw,
                        SH=sh, SW=sw, PH=ph, PW=pw, DH=dh, DW=dwl, HAS_DW=dw_weight is not None,
                        HAS_DWB=dw_bias is not None, HAS_PWB=pw_bias is not None, BP=bp, BCO=bco, num_warps=8)
    return y


def depthwise_pointwise(x: torch.Tensor, dw_weight: torch.Tensor | None, dw_bias: torch.Tensor | None,
                        pw_weight: torch.Tensor, pw_bias: torch.Tensor | None, stride=1, padding=0,
                        dilation=1) -> torch.Tensor:
    """Depthwise (optional; channel multiplier 1) then pointwise 2-D convolution: the fused Triton kernel for fp32
    CUDA tensors with at most 16 channels, the two PyTorch convolutions elsewhere (same math)."""
    c = x.shape[1] if x.dim() == 4 else -1
    if not (_usable(x, dw_weight, dw_bias, pw_weight, pw_bias) and 0 < c <= 16 and not isinstance(padding, str)
            and (dw_weight is None or tuple(dw_weight.shape[:2]) == (c, 1))
            and tuple(pw_weight.shape[1:]) == (c, 1, 1)):
        return depthwise_pointwise_ref(x, dw_weight, dw_bias, pw_weight, pw_bias, stride, padding, dilation)
    return depthwise_pointwise_triton(x, dw_weight, dw_bias, pw_weight, pw_bias, stride, padding, dilation)
