"""``blocks.direct_conv``: the direct 2-D / 3-D convolution tiles against ``torch.nn.functional.conv{2,3}d`` (several
C_in, kernel sizes, channel counts that are not powers of two, several position blocks) and the shared
activations against torch over a wide range (in Triton's interpreter on a CPU-only machine)."""

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.direct_conv import (
    conv2d_tile,
    conv3d_tile,
    gelu,
    mish,
    pos_block,
    softplus,
    tanh,
)

DEV = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def _conv2d_kernel(x_ptr, w_ptr, out_ptr, C_IN, H, W, C, OH, OW,
                   K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    pmask = p < OH * OW
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    offs = (n * C + c).to(tl.int64)[:, None] * (OH * OW) + p[None, :]
    tl.store(out_ptr + offs, v, mask=cmask[:, None] & pmask[None, :])


@triton.jit
def _conv3d_kernel(x_ptr, w_ptr, out_ptr, C_IN, D, H, W, C, OD, OH, OW,
                   K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OD * OH * OW
    pmask = p < npos
    r = p % (OH * OW)
    v = conv3d_tile(x_ptr, w_ptr, n, c, cmask, p // (OH * OW), r // OW, r % OW, pmask, C_IN, D, H, W, K,
                    BLOCK_C, BLOCK_P)
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, v, mask=cmask[:, None] & pmask[None, :])


@triton.jit
def _act_kernel(x_ptr, out_ptr, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, tanh(x), mask=m)
    tl.store(out_ptr + total + offs, softplus(x), mask=m)
    tl.store(out_ptr + 2 * total + offs, mish(x), mask=m)
    tl.store(out_ptr + 3 * total + offs, gelu(x), mask=m)


def _close(got, want):
    tol = 1e-5 * want.pow(2).mean().sqrt() + 1e-5 * want.abs()
    assert ((got - want).abs() <= tol).all(), (got - want).abs().max().item()


@pytest.mark.parametrize("cin,cout,k,hw", [(3, 16, 3, (20, 19)), (2, 5, 5, (9, 8))])
def test_conv2d_tile_matches_torch(cin, cout, k, hw):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, cin, *hw, generator=gen).to(DEV)
    w = torch.randn(cout, cin, k, k, generator=gen).to(DEV)
    oh, ow = hw[0] - k + 1, hw[1] - k + 1
    out = torch.empty(2, cout, oh, ow, device=DEV)
    bp = pos_block(oh * ow, 128)
    _conv2d_kernel[(2, triton.cdiv(oh * ow, bp))](x, w, out, cin, *hw, cout, oh, ow, K=k,
                                                  BLOCK_C=triton.next_power_of_2(cout), BLOCK_P=bp)
    _close(out, F.conv2d(x, w))


@pytest.mark.parametrize("cin,cout,k,dhw", [(3, 16, 3, (5, 12, 11)), (2, 5, 2, (3, 4, 5))])
def test_conv3d_tile_matches_torch(cin, cout, k, dhw):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, cin, *dhw, generator=gen).to(DEV)
    w = torch.randn(cout, cin, k, k, k, generator=gen).to(DEV)
    od, oh, ow = (s - k + 1 for s in dhw)
    out = torch.empty(2, cout, od, oh, ow, device=DEV)
    bp = pos_block(od * oh * ow, 128)
    _conv3d_kernel[(2, triton.cdiv(od * oh * ow, bp))](x, w, out, cin, *dhw, cout, od, oh, ow, K=k,
                                                       BLOCK_C=triton.next_power_of_2(cout), BLOCK_P=bp)
    _close(out, F.conv3d(x, w))


def test_activations_match_torch():
    x = torch.cat([torch.linspace(-100.0, 100.0, 2001), torch.tensor([0.0, 1e-30, -1e-30, 1e-6, -1e-6])]).to(DEV)
    out = torch.empty(4 * x.numel(), device=DEV)
    _act_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    got = out.view(4, -1)
    x64 = x.double()
    want = [torch.tanh(x64), F.softplus(x64), F.mish(x64), F.gelu(x64)]
    for g, w in zip(got, want):
        assert ((g.double() - w).abs() <= 1e-6 * w.abs() + 1e-7).all(), (g.double() - w).abs().max().item()
