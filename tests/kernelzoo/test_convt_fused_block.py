"""``blocks.convt_fused``: the per-class transposed-convolution accumulators (2-D and 3-D) that fused
kernelbench-v0 kernels build on, and the GroupNorm partials passes, against PyTorch on small shapes (Triton's
interpreter on a CPU-only machine). Each test kernel stores the accumulator tile of every class position (the 3-D
one placed by ``convt3d_program_tile``), so the output must equal ``conv_transpose{2,3}d`` without bias."""

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.convt_fused import (
    convt2d_class_acc,
    convt3d_class_acc,
    convt3d_program_tile,
    groupnorm_apply_kernel,
    groupnorm_merge_partials_kernel,
)

DEV = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def _store3d(x_ptr, w_ptr, y_ptr, ID, IH, IW, OD, OH, OW, JD, JH, JW,
             CIN: tl.constexpr, COUT: tl.constexpr, KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
             SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr,
             PW: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rd, rh, rw, jd, jh, jw, od, oh, ow, mm = convt3d_program_tile(tl.program_id(0), JD, JH, JW, OD, OH, OW,
                                                                  SD, SH, SW, BM)
    n = tl.program_id(1)
    co = tl.arange(0, BN)
    cm = co < COUT
    acc = convt3d_class_acc(x_ptr, w_ptr, n, jd, jh, jw, mm, rd, rh, rw, ID, IH, IW, co, cm, CIN, COUT, KD, KH, KW,
                            SD, SH, SW, PD, PH, PW, BM, BN, BK)
    off = (n * COUT + co)[None, :] * (OD * OH * OW) + ((od * OH + oh) * OW + ow)[:, None]
    tl.store(y_ptr + off, acc, mask=mm[:, None] & cm[None, :])


@triton.jit
def _store2d(x_ptr, w_ptr, y_ptr, NB, H, W, OH, OW, JH, JW, CIN: tl.constexpr, COUT: tl.constexpr, K: tl.constexpr,
             S: tl.constexpr, P: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    cls = tl.program_id(1)
    rh, rw = cls // S, cls % S
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    jw = m % JW
    jh = (m // JW) % JH
    n = m // (JW * JH)
    oh, ow = jh * S + rh, jw * S + rw
    mm = (n < NB) & (oh < OH) & (ow < OW)
    acc = convt2d_class_acc(x_ptr, w_ptr, n, jh, jw, rh, rw, mm, H, W, CIN, COUT, K, S, P, BM, BN, BK)
    co = tl.arange(0, BN)
    off = (n * COUT * OH * OW + oh * OW + ow)[:, None] + (co * (OH * OW))[None, :]
    tl.store(y_ptr + off, acc, mask=mm[:, None] & (co < COUT)[None, :])


CASES_3D = {  # N, Cin, Cout, spatial, kernel, stride, padding, output padding
    "s2_k3": (2, 5, 6, (2, 3, 3), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1)),
    "mixed": (1, 20, 3, (2, 2, 3), (2, 3, 4), (1, 3, 2), (0, 1, 2), (0, 2, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES_3D))
def test_convt3d_class_acc_is_the_bias_free_transposed_conv(name):
    n, cin, cout, sp, ks, s, p, op = CASES_3D[name]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=gen).to(DEV)
    w = torch.randn(cin, cout, *ks, generator=gen).to(DEV)
    want = F.conv_transpose3d(x, w, None, s, p, op)
    od, oh, ow = want.shape[2:]
    jd, jh, jw = (-(-o // st) for o, st in zip((od, oh, ow), s, strict=True))
    wt = w.permute(2, 3, 4, 0, 1).reshape(-1, cin, cout).contiguous()  # (taps, Cin, Cout)
    y = torch.full_like(want, float("nan"))
    bm = 16
    grid = (s[0] * s[1] * s[2] * triton.cdiv(jd * jh * jw, bm), n)
    _store3d[grid](x, wt, y, *sp, od, oh, ow, jd, jh, jw, CIN=cin, COUT=cout, KD=ks[0], KH=ks[1], KW=ks[2],
                   SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2], BM=bm, BN=16, BK=16)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)  # every output written (NaN otherwise)


@pytest.mark.parametrize("case", [(2, 5, 6, 3, 4, 4, 2, 1, 1), (1, 18, 3, 4, 3, 3, 1, 0, 0), (1, 4, 8, 2, 3, 5, 3, 2, 2)])
def test_convt2d_class_acc_is_the_bias_free_transposed_conv(case):
    n, cin, cout, h, wd, k, s, p, op = case
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(n, cin, h, wd, generator=gen).to(DEV)
    w = torch.randn(cin, cout, k, k, generator=gen).to(DEV)
    want = F.conv_transpose2d(x, w, None, s, p, op)
    oh, ow = want.shape[2:]
    jh, jw = -(-oh // s), -(-ow // s)
    y = torch.full_like(want, float("nan"))
    bm = 16
    _store2d[(triton.cdiv(n * jh * jw, bm), s * s)](x, w.permute(2, 3, 0, 1).contiguous(), y, n, h, wd, oh, ow, jh, jw,
                                                    CIN=cin, COUT=cout, K=k, S=s, P=p, BM=bm, BN=16, BK=16)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)


def test_groupnorm_partials_merge_and_apply_equal_group_norm():
    """Per-tile (count, mean, M2) partials of unequal tiles, merged per (sample, group), then applied in place."""
    gen = torch.Generator().manual_seed(2)
    nb, c, groups, inner = 2, 8, 4, 37
    y = (torch.randn(nb, c, inner, generator=gen) * 3 + 5).to(DEV)
    gamma, beta = torch.randn(c, generator=gen).to(DEV), torch.randn(c, generator=gen).to(DEV)
    want = F.group_norm(y, groups, gamma, beta, 1e-5)
    bounds = [0, 5, 16, 30, inner]  # four tiles of 5, 11, 14 and 7 positions
    parts = [y[:, :, a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    cnt = torch.tensor([[p.shape[2] for p in parts]] * nb, dtype=torch.float32, device=DEV).reshape(-1)
    mean = torch.stack([p.mean(2) for p in parts], 1).reshape(-1, c).contiguous()
    m2 = torch.stack([((p - p.mean(2, keepdim=True)) ** 2).sum(2) for p in parts], 1).reshape(-1, c).contiguous()
    stats = torch.empty(nb * groups * 2, device=DEV)
    groupnorm_merge_partials_kernel[(nb * groups,)](cnt, mean, m2, stats, len(parts), 1e-5, G=groups, COUT=c,
                                                    CPG=c // groups, BLOCK_PART=4)
    out = y.contiguous()
    groupnorm_apply_kernel[(nb * c, triton.cdiv(inner, 16))](out, stats, gamma, beta, inner, C=c, CPG=c // groups,
                                                            BLOCK=16)
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
