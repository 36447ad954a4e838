"""Fused linear + cross-entropy: the same loss and gradients as logits + F.cross_entropy (fp64 on CPU, every
option), whatever the chunking, and the logits never held whole; bad targets and options are errors."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import fused_linear_cross_entropy, fused_linear_cross_entropy_ref
from cudal1.kernelzoo.ops import fused_linear_cross_entropy as flce_mod

D = torch.float64


def inputs(n=11, h=6, v=13, bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, h, dtype=D, generator=g)
    w = torch.randn(v, h, dtype=D, generator=g)
    b = torch.randn(v, dtype=D, generator=g) if bias else None
    t = torch.randint(0, v, (n,), generator=g)
    t[[1, 4]] = -100  # ignored rows
    return x, w, b, t


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("chunk_size", [None, 1, 4, 13])
def test_loss_and_gradients_match_the_reference(reduction, smoothing, bias, chunk_size):
    x, w, b, t = inputs(bias=bias)
    leaves = [p.clone().requires_grad_(True) for p in (x, w) + ((b,) if bias else ())]
    refs = [p.clone().requires_grad_(True) for p in (x, w) + ((b,) if bias else ())]
    loss = fused_linear_cross_entropy(leaves[0], leaves[1], t, leaves[2] if bias else None, label_smoothing=smoothing,
                                      reduction=reduction, chunk_size=chunk_size)
    want = fused_linear_cross_entropy_ref(refs[0], refs[1], t, refs[2] if bias else None, label_smoothing=smoothing,
                                          reduction=reduction)
    torch.testing.assert_close(loss, want, rtol=1e-10, atol=1e-12)  # fp64 in, fp64 statistics
    (3.0 * loss).backward()
    (3.0 * want).backward()
    for p, q in zip(leaves, refs, strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-12)


def test_without_gradients_nothing_is_accumulated_and_the_loss_is_the_same():
    x, w, b, t = inputs()
    with torch.no_grad():
        loss = fused_linear_cross_entropy(x, w, t, b)
    torch.testing.assert_close(loss, fused_linear_cross_entropy_ref(x, w, t, b))


def test_the_logits_are_never_held_whole(monkeypatch):
    """Each chunk's logits are at most x's size (N x H elements), however large the vocabulary."""
    seen = []
    real = torch.nn.functional.linear
    monkeypatch.setattr(flce_mod.F, "linear", lambda *a: seen.append(real(*a).shape) or real(*a))
    x, w, b, t = inputs(n=16, h=4, v=64)
    fused_linear_cross_entropy(x.requires_grad_(), w, t, b)
    # two passes over the vocabulary (statistics, gradients), each covering it once
    assert seen and all(r * c <= 16 * 4 for r, c in seen) and sum(c for _, c in seen) == 2 * 64


@pytest.mark.parametrize("change, match", [
    (lambda x, w, b, t: (x, w, b, t.clone().fill_(13)), r"targets\[0\] = 13 is outside \[0, 13\)"),
    (lambda x, w, b, t: (x, w, b, t.clone().fill_(-5)), r"outside \[0, 13\) and is not ignore_index"),
    (lambda x, w, b, t: (x.float(), w, b, t), "share one floating dtype"),
    (lambda x, w, b, t: (x[None], w, b, t), r"x must be \(N, H\)"),
    (lambda x, w, b, t: (x, w, b, t[:3]), "targets must be"),
])
def test_bad_inputs_are_errors_not_garbage(change, match):
    x, w, b, t = change(*inputs())
    with pytest.raises((ValueError, TypeError), match=match):
        fused_linear_cross_entropy(x, w, t, b)


def test_bad_options_are_errors():
    x, w, b, t = inputs()
    with pytest.raises(ValueError, match="reduction must be one of"):
        fused_linear_cross_entropy(x, w, t, b, reduction="none")
    with pytest.raises(ValueError, match="label_smoothing"):
        fused_linear_cross_entropy(x, w, t, b, label_smoothing=1.5)
    with pytest.raises(ValueError, match="chunk_size"):
        fused_linear_cross_entropy(x, w, t, b, chunk_size=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_low_precision_inputs_stay_close_to_the_fp32_reference(dtype):
    x, w, b, t = (a.to(dtype) if a.is_floating_point() else a for a in inputs())
    xl, wl = x.clone().requires_grad_(), w.clone().requires_grad_()
    xr, wr = x.float().requires_grad_(), w.float().requires_grad_()
    loss = fused_linear_cross_entropy(xl, wl, t, b)
    want = fused_linear_cross_entropy_ref(xr, wr, t, b.float())
    tol = {torch.float32: 1e-5, torch.bfloat16: 3e-2, torch.float16: 5e-3}[dtype]
    torch.testing.assert_close(loss, want, rtol=tol, atol=tol)
    loss.backward()
    want.backward()
    assert xl.grad.dtype == dtype and wl.grad.dtype == dtype
    torch.testing.assert_close(xl.grad.float(), xr.grad, rtol=tol * 4, atol=tol)
    torch.testing.assert_close(wl.grad.float(), wr.grad, rtol=tol * 4, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("smoothing, reduction, chunk", [(0.0, "mean", 4), (0.2, "sum", 5), (0.1, "mean", 13)])
def test_the_triton_path_matches_the_reference(dtype, smoothing, reduction, chunk):
    """The CUDA path's two kernels (Triton's interpreter on a CPU-only machine), against the fp64 reference."""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x, w, b, t = inputs()
    args = [a.to(dev, dtype) for a in (x, w, b)]
    loss, gx, gw, gb = flce_mod._flce_triton(args[0], args[1], t.to(dev), args[2], -100, smoothing, reduction, chunk,
                                             True)
    refs = [p.clone().requires_grad_(True) for p in (x, w, b)]
    want = fused_linear_cross_entropy_ref(refs[0], refs[1], t, refs[2], label_smoothing=smoothing, reduction=reduction)
    want.backward()
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(loss.double().cpu(), want.detach(), **tol)
    for got, ref in zip((gx, gw, gb), refs, strict=True):
        torch.testing.assert_close(got.double().cpu(), ref.grad, **tol)


@pytest.mark.parametrize("h, chunk", [(6, 4), (7, 3), (7, 16)])  # h=7: the fp32 view's start moves one row up
def test_grad_x_summed_in_grad_w_tail_rows_is_exact(h, chunk):
    """16-bit weights with V >= 2N: grad_x's fp32 sum lives in grad_W's last rows (no memory of its own), which
    are written only after grad_x is final; every gradient still matches the reference, the tail rows too."""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x, w, b, t = inputs(n=5, h=h, v=13)
    t[0] = 12  # a target in the tail rows
    t0, acc = flce_mod._accumulator_in_tail(torch.empty(13, h, dtype=torch.float16), 5)
    assert t0 <= 13 - 2 * 5 and acc.dtype == torch.float32 and acc.shape == (5, h)
    args = [a.to(dev, torch.float16) for a in (x, w, b)]
    loss, gx, gw, gb = flce_mod._flce_triton(args[0], args[1], t.to(dev), args[2], -100, 0.1, "mean", chunk, True)
    refs = [p.clone().requires_grad_(True) for p in (x, w, b)]
    fused_linear_cross_entropy_ref(refs[0], refs[1], t, refs[2], label_smoothing=0.1).backward()
    for got, ref in zip((gx, gw, gb), refs, strict=True):
        torch.testing.assert_close(got.double().cpu(), ref.grad, rtol=2e-2, atol=2e-2)


def test_no_tail_accumulator_where_it_does_not_fit():
    """V < 2N, or 32-bit weights: a separate accumulator (t0 = V)."""
    t0, acc = flce_mod._accumulator_in_tail(torch.empty(9, 4, dtype=torch.float16), 5)
    assert t0 == 9 and acc.data_ptr() and acc.untyped_storage().nbytes() == 5 * 4 * 4
    assert flce_mod._accumulator_in_tail(torch.empty(40, 4, dtype=torch.float32), 5)[0] == 40
