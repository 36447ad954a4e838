"""Per-sample losses (mse, smooth L1, KL, cross-entropy, cosine embedding, triplet margin) and normalisations
(group norm, inference batch norm): each Triton launcher against its PyTorch reference on fresh random inputs
for every family's config (BLOCK shrunk so several blocks run), odd shapes and edge values; the
torch.library registrations, the CPU fallbacks, and clear errors for bad input."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import arch
from cudal1.kernelzoo.ops import (
    batch_norm,
    cosine_embedding_loss,
    cross_entropy_loss,
    group_norm,
    kl_div_loss,
    mse_loss,
    smooth_l1_loss,
    triplet_margin_loss,
)

from .helpers import close_elementwise
from .helpers import rnd as random_normal

DEV = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: Triton's interpreter
FAMILIES = list(arch.CAPABILITY)
ROW_SHAPES = [(5, 123), (3, 1), (2, 300)]


def rnd(shape, seed, scale=1.0, shift=0.0):
    return random_normal(shape, seed, scale=scale, shift=shift)


def small(cfg: dict, block: int = 64) -> dict:
    """``cfg`` with BLOCK shrunk so that rows/groups span several blocks in the interpreter."""
    return dict(cfg, BLOCK=min(cfg["BLOCK"], block))


def assert_close(got, want, atol=1e-5, rtol=1e-5):
    close_elementwise(got, want, atol, rtol, equal_nan=True, same_dtype=True)


# ---- per-sample losses -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("family", FAMILIES)
def test_mse_loss_kernel(shape, family):
    p, t = rnd(shape, 1), rnd(shape, 2)
    assert_close(mse_loss.mse_loss_launch(p, t, small(mse_loss.CONFIGS[family])), mse_loss.mse_loss_ref(p, t))


@pytest.mark.parametrize("beta", [1.0, 0.3, 0.0])
@pytest.mark.parametrize("family", FAMILIES)
def test_smooth_l1_loss_kernel(beta, family):
    p, t = rnd((5, 123), 3, 1.5), rnd((5, 123), 4, 1.5)  # both regimes occur
    got = smooth_l1_loss.smooth_l1_loss_launch(p, t, beta, small(smooth_l1_loss.CONFIGS[family]))
    assert_close(got, smooth_l1_loss.smooth_l1_loss_ref(p, t, beta))


@pytest.mark.parametrize("shape", ROW_SHAPES)
@pytest.mark.parametrize("family", FAMILIES)
def test_kl_div_loss_kernel(shape, family):
    log_q = torch.log_softmax(rnd(shape, 5), -1)
    p = torch.softmax(rnd(shape, 6), -1)
    if shape[-1] > 1:
        p[0, :3] = 0.0  # xlogy(0, 0) = 0
    got = kl_div_loss.kl_div_loss_launch(log_q, p, small(kl_div_loss.CONFIGS[family]))
    assert_close(got, kl_div_loss.kl_div_loss_ref(log_q, p))


def test_kl_div_loss_zero_probability_against_minus_infinity_is_nan_as_torch():
    log_q, p = torch.log_softmax(rnd((2, 40), 7), -1), torch.softmax(rnd((2, 40), 8), -1)
    log_q[0, 5], p[0, 5] = float("-inf"), 0.0
    got = kl_div_loss.kl_div_loss_launch(log_q, p, {"BLOCK": 16, "num_warps": 1})
    want = kl_div_loss.kl_div_loss_ref(log_q, p)
    assert torch.isnan(want[0]) and torch.isnan(got[0])
    assert_close(got, want)


@pytest.mark.parametrize("shape", [(6, 123), (4, 1), (3, 513)])
@pytest.mark.parametrize("family", FAMILIES)
def test_cross_entropy_loss_kernel(shape, family):
    x = rnd(shape, 9, 2.0)
    t = torch.randint(0, shape[1], shape[:1], generator=torch.Generator().manual_seed(10)).to(DEV)
    got = cross_entropy_loss.cross_entropy_loss_launch(x, t, config=small(cross_entropy_loss.CONFIGS[family]))
    assert_close(got, cross_entropy_loss.cross_entropy_loss_ref(x, t))


def test_cross_entropy_loss_edge_values():
    x = rnd((6, 100), 11, 2.0) + 50.0  # large logits: the online max must keep exp() finite
    t = torch.tensor([3, -100, 7, 0, 99, 42], device=DEV)
    x[2, :60] = float("-inf")  # whole leading blocks of -inf
    x[3] = float("-inf")  # whole row: NaN, as torch
    x[4, 10] = float("inf")  # +inf: NaN, as torch
    x[5, 42] = float("-inf")  # target logit -inf: loss +inf
    got = cross_entropy_loss.cross_entropy_loss_launch(x, t, config={"BLOCK": 16, "num_warps": 1})
    want = cross_entropy_loss.cross_entropy_loss_ref(x, t)
    assert got[1] == 0.0 and torch.isnan(got[3]) and torch.isnan(got[4]) and got[5] == float("inf")
    assert_close(got, want)


def test_cross_entropy_loss_int32_targets_and_out_of_range_is_an_error():
    x = rnd((3, 50), 12)
    t = torch.tensor([4, 49, -100], device=DEV, dtype=torch.int32)
    got = cross_entropy_loss.cross_entropy_loss_launch(x, t, config={"BLOCK": 16, "num_warps": 1})
    assert_close(got, cross_entropy_loss.cross_entropy_loss_ref(x, t.long()))
    for bad in (50, -1):  # a kernel reading logits[i, 50] would return garbage (it returned NaN): refused first
        with pytest.raises(ValueError, match=f"targets\\[1\\] = {bad} is outside \\[0, 50\\)"):
            cross_entropy_loss.cross_entropy_loss_launch(x, torch.tensor([4, bad, -100], device=DEV, dtype=torch.int32))


@pytest.mark.parametrize("margin", [0.0, 0.3, -0.5])
@pytest.mark.parametrize("family", FAMILIES)
def test_cosine_embedding_loss_kernel(margin, family):
    x1, x2 = rnd((9, 77), 13), rnd((9, 77), 14)
    x2[0] = x1[0] * 2.0  # cos = 1
    y = torch.tensor([1.0, -1, 1, -1, -1, 1, 0, 1, -1], device=DEV)  # 0: loss 0, as torch
    got = cosine_embedding_loss.cosine_embedding_loss_launch(x1, x2, y, margin,
                                                             small(cosine_embedding_loss.CONFIGS[family], 32))
    assert_close(got, cosine_embedding_loss.cosine_embedding_loss_ref(x1, x2, y, margin))


def test_cosine_embedding_loss_zero_vector_and_integer_labels():
    x1, x2 = rnd((3, 20), 15), rnd((3, 20), 16)
    x1[1] = 0.0  # torch's 1e-12 epsilon keeps this finite
    y = torch.tensor([1, -1, -1], device=DEV)
    got = cosine_embedding_loss.cosine_embedding_loss_launch(x1, x2, y, 0.1, {"BLOCK": 16, "num_warps": 1})
    assert torch.isfinite(got).all()
    assert_close(got, cosine_embedding_loss.cosine_embedding_loss_ref(x1, x2, y, 0.1))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_triplet_margin_loss_kernel(swap, family):
    a = rnd((11, 150), 17)
    p, n = a + rnd((11, 150), 18, 1.4), rnd((11, 150), 19)
    got = triplet_margin_loss.triplet_margin_loss_launch(a, p, n, 1.0, 1e-6, swap,
                                                         small(triplet_margin_loss.CONFIGS[family]))
    want = triplet_margin_loss.triplet_margin_loss_ref(a, p, n, 1.0, 1e-6, swap)
    assert (want == 0).any() and (want > 0).any(), "both hinge regimes should occur"
    assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_triplet_margin_loss_tail_lanes_add_no_eps():
    # D = 17 with BLOCK 16: 15 masked lanes in the last block; a large eps makes a leak visible
    a, p, n = rnd((4, 17), 20), rnd((4, 17), 21), rnd((4, 17), 22)
    got = triplet_margin_loss.triplet_margin_loss_launch(a, p, n, 5.0, 0.5, False, {"BLOCK": 16, "num_warps": 1})
    assert_close(got, triplet_margin_loss.triplet_margin_loss_ref(a, p, n, 5.0, 0.5, False))


def test_mse_loss_propagates_nan():
    p, t = rnd((3, 40), 23), rnd((3, 40), 24)
    p[1, 7] = float("nan")
    got = mse_loss.mse_loss_launch(p, t, {"BLOCK": 16, "num_warps": 1})
    assert torch.isnan(got[1]) and torch.isfinite(got[[0, 2]]).all()


# ---- normalisations -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, groups", [((3, 12, 7, 9), 4), ((2, 6, 5), 6), ((2, 8, 33, 3), 1), ((1, 4, 1, 1), 2)])
@pytest.mark.parametrize("family", FAMILIES)
def test_group_norm_kernel(shape, groups, family):
    x = rnd(shape, 25, 1.0, 0.5)
    w, b = rnd(shape[1:2], 26), rnd(shape[1:2], 27)
    cfg = dict(group_norm.CONFIGS[family], BLOCK=32, CHUNK=64)  # several tiles per chunk, several chunks
    assert_close(group_norm.group_norm_launch(x, groups, w, b, 1e-5, cfg), group_norm.group_norm_ref(x, groups, w, b))


def test_group_norm_statistics_do_not_cancel():
    # mean 1000, std 0.01: E[x^2] - E[x]^2 in fp32 would lose the variance entirely
    x = rnd((2, 8, 10, 10), 28, 0.01, 1000.0)
    w, b = rnd((8,), 29), rnd((8,), 30)
    got = group_norm.group_norm_launch(x, 2, w, b, 1e-5, {"BLOCK": 32, "CHUNK": 64, "num_warps": 1})
    exact = group_norm.group_norm_ref(x.double(), 2, w.double(), b.double()).float()
    assert_close(got, exact, atol=2e-2, rtol=0)  # fp32 torch itself is off by ~2e-2 here
    assert (got - exact).abs().max() <= (group_norm.group_norm_ref(x, 2, w, b) - exact).abs().max() + 1e-3


@pytest.mark.parametrize("shape", [(3, 10, 17, 15), (4, 5), (2, 3, 40)])
@pytest.mark.parametrize("family", FAMILIES)
def test_batch_norm_kernel(shape, family):
    c = shape[1]
    x = rnd(shape, 31)
    rm, rv = rnd((c,), 32, 0.2), rnd((c,), 33, 0.2).abs() + 0.5
    w, b = rnd((c,), 34, 0.2, 1.0), rnd((c,), 35, 0.2)
    got = batch_norm.batch_norm_launch(x, rm, rv, w, b, 1e-5, small(batch_norm.CONFIGS[family], 32))
    assert_close(got, batch_norm.batch_norm_ref(x, rm, rv, w, b))


def test_batch_norm_reads_the_buffers_at_every_call():
    x = rnd((2, 3, 4, 5), 36)
    rm, rv, w, b = rnd((3,), 37), rnd((3,), 38).abs() + 0.5, rnd((3,), 39), rnd((3,), 40)
    cfg = {"BLOCK": 16, "num_warps": 1}
    first = batch_norm.batch_norm_launch(x, rm, rv, w, b, 1e-5, cfg)
    rv.mul_(4.0)
    b.add_(1.0)
    second = batch_norm.batch_norm_launch(x, rm, rv, w, b, 1e-5, cfg)
    assert not torch.allclose(first, second)
    assert_close(second, batch_norm.batch_norm_ref(x, rm, rv, w, b))


# ---- registration, CPU fallback, errors ---------------------------------------------------------------------

def _args():
    x, y = torch.randn(4, 9), torch.randn(4, 9)
    img = torch.randn(2, 6, 3, 5)
    c6 = torch.randn(6)
    return [
        ("mse_loss", (x, y)),
        ("smooth_l1_loss", (x, y, 0.7)),
        ("kl_div_loss", (torch.log_softmax(x, -1), torch.softmax(y, -1))),
        ("cross_entropy_loss", (x, torch.tensor([0, 8, 3, -100]), -100)),
        ("cosine_embedding_loss", (x, y, torch.tensor([1.0, -1.0, 1.0, -1.0]), 0.2)),
        ("triplet_margin_loss", (x, y, torch.randn(4, 9), 1.0, 1e-6, False)),
        ("group_norm", (img, 3, c6, torch.randn(6), 1e-5)),
        ("batch_norm", (img, c6, torch.rand(6) + 0.5, torch.randn(6), torch.randn(6), 1e-5)),
    ]


@pytest.mark.parametrize("op, args", _args(), ids=[a[0] for a in _args()])
def test_torch_library_registration(op, args):
    torch.library.opcheck(getattr(torch.ops.cudal1, op), args)


def test_public_functions_fall_back_to_the_references_on_cpu():
    F = torch.nn.functional
    x, y, z = torch.randn(5, 30), torch.randn(5, 30), torch.randn(5, 30)
    lab = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0])
    t = torch.tensor([0, 29, 4, 7, 11])
    assert torch.allclose(mse_loss.mse_loss(x, y), F.mse_loss(x, y, reduction="none").mean(-1))
    assert torch.allclose(smooth_l1_loss.smooth_l1_loss(x, y, 0.5),
                          F.smooth_l1_loss(x, y, beta=0.5, reduction="none").mean(-1))
    lq, p = torch.log_softmax(x, -1), torch.softmax(y, -1)
    assert torch.allclose(kl_div_loss.kl_div_loss(lq, p), F.kl_div(lq, p, reduction="none").sum(-1))
    assert torch.allclose(cross_entropy_loss.cross_entropy_loss(x, t), F.cross_entropy(x, t, reduction="none"))
    assert torch.allclose(cosine_embedding_loss.cosine_embedding_loss(x, y, lab, 0.1),
                          F.cosine_embedding_loss(x, y, lab, margin=0.1, reduction="none"))
    assert torch.allclose(triplet_margin_loss.triplet_margin_loss(x, y, z, 0.5),
                          F.triplet_margin_loss(x, y, z, margin=0.5, reduction="none"))
    img = torch.randn(2, 6, 4, 4)
    w, b, rm, rv = torch.randn(6), torch.randn(6), torch.randn(6), torch.rand(6) + 0.5
    assert torch.allclose(group_norm.group_norm(img, 2, w, b), F.group_norm(img, 2, w, b))
    assert torch.allclose(batch_norm.batch_norm(img, rm, rv, w, b), F.batch_norm(img, rm, rv, w, b, False))


@pytest.mark.parametrize("call, match", [
    (lambda: mse_loss.mse_loss_launch(torch.randn(3, 4), torch.randn(3, 5)), "same shape"),
    (lambda: kl_div_loss.kl_div_loss(torch.randn(3, 4), torch.randn(4, 3)), "same shape"),
    (lambda: smooth_l1_loss.smooth_l1_loss(torch.randn(3, 4), torch.randn(3, 4), -1.0), "beta"),
    (lambda: cross_entropy_loss.cross_entropy_loss(torch.randn(3, 4), torch.tensor([0.0, 1.0, 2.0])), "int64"),
    (lambda: cross_entropy_loss.cross_entropy_loss(torch.randn(3, 4, 2), torch.tensor([0, 1, 2])), r"\(N, C\)"),
    (lambda: cosine_embedding_loss.cosine_embedding_loss(torch.randn(3, 4), torch.randn(3, 4), torch.ones(4)), "y"),
    (lambda: triplet_margin_loss.triplet_margin_loss(torch.randn(3, 4), torch.randn(3, 4), torch.randn(2, 4)),
     "same shape"),
    (lambda: group_norm.group_norm(torch.randn(2, 6, 3), 4, torch.ones(6), torch.zeros(6)), "divisible"),
    (lambda: group_norm.group_norm(torch.randn(2, 6, 3), 3, torch.ones(5), torch.zeros(6)), "shape"),
    (lambda: batch_norm.batch_norm(torch.randn(2, 6, 3), torch.zeros(6), torch.ones(6), torch.ones(5),
                                   torch.zeros(6)), "shape"),
], ids=["mse-shape", "kl-shape", "beta", "ce-dtype", "ce-dim", "cos-y", "triplet-shape", "gn-groups", "gn-weight",
        "bn-weight"])
def test_bad_input_is_a_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
