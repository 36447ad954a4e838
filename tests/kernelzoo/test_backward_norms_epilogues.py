"""Backward kernels of the channel/group norms, the fused row norms and the bias epilogues (group_norm, batch_norm,
add_layer_norm, embedding_layer_norm, layer_norm_modulate, bias_act, bias_act_mean, bias_glu, rotary), against the
fp64 autograd of their PyTorch references, per dtype, on odd shapes.

On a CPU-only machine the kernels run in Triton's interpreter (tests/kernelzoo/conftest.py sets it): the
``kernels_on_cpu`` fixture makes the ops' "is this on the kernels?" checks accept CPU tensors, so each op's
registered backward runs its kernels there; without it (or for float64) the fast backward declines and the
reference's VJP runs. Every end-to-end test also asserts that the kernel launcher was called."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry
from cudal1.kernelzoo.ops import _norm_backward as nb
from cudal1.kernelzoo.ops import add_layer_norm as aln
from cudal1.kernelzoo.ops import batch_norm as bn
from cudal1.kernelzoo.ops import bias_act as ba
from cudal1.kernelzoo.ops import bias_act_mean as bam
from cudal1.kernelzoo.ops import bias_glu as bg
from cudal1.kernelzoo.ops import embedding_layer_norm as eln
from cudal1.kernelzoo.ops import group_norm as gn
from cudal1.kernelzoo.ops import layer_norm_modulate as lnm
from cudal1.kernelzoo.ops import rotary as ro

from .helpers import DEV, close_scaled, rnd

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
#: (atol, rtol) of a gradient against the fp64 reference, per dtype (atol scaled by the largest |gradient|):
#: fp32 math, one rounding at the store
TOL = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (5e-2, 5e-2), torch.float16: (5e-3, 5e-3)}
OPS = ["group_norm", "batch_norm", "add_layer_norm", "embedding_layer_norm", "layer_norm_modulate", "bias_act",
       "bias_act_mean", "bias_glu", "rotary"]


def close(got, want, dtype, what):
    close_scaled(got, want, TOL[dtype], f"{what} ({dtype})")


@pytest.fixture
def kernels_on_cpu(monkeypatch):
    """The ops' kernel checks accept CPU tensors (of the kernel dtypes): their backward kernels run in the
    interpreter."""
    if DEV == "cpu":
        fake = lambda *ts: all(t.dtype in registry.KERNEL_DTYPES for t in ts)  # noqa: E731
        for mod in (nb, bn, ba, bam, bg, gn, ro):
            monkeypatch.setattr(mod, "on_kernels", fake)


def spy(monkeypatch, mod, name):
    """Count the calls of launcher ``mod.name`` (looked up by the op's backward at call time)."""
    calls = []
    real = getattr(mod, name)

    def wrapped(*a, **k):
        calls.append(name)
        return real(*a, **k)

    monkeypatch.setattr(mod, name, wrapped)
    return calls


def check_backward(fn, ref, inputs, wants, dtype, what, calls, *, sum_loss=False):
    """Gradients of ``fn(*inputs)`` (through the registry's autograd) w.r.t. ``inputs[i]`` for ``i`` in ``wants``
    against the fp64 autograd of ``ref`` at the same (rounded) values, and the backward called the spied launcher
    (``calls``) once; ``sum_loss``: backward of ``out.sum()`` (an expanded, stride-0 output gradient), else of a
    random one."""
    leaves = [x.detach().requires_grad_(i in wants) if isinstance(x, torch.Tensor) else x
              for i, x in enumerate(inputs)]
    out = fn(*leaves)
    before = len(calls)  # the forward may share the launcher (rotary)
    dy = torch.ones_like(out).expand(out.shape) if sum_loss else rnd(out.shape, 99, out.dtype)
    got = torch.autograd.grad(out.sum() if sum_loss else out, [leaves[i] for i in wants],
                              None if sum_loss else dy)
    assert len(calls) == before + 1, f"{what}: the backward did not run its kernels"
    xs = [x.detach().cpu().double().requires_grad_(i in wants) if isinstance(x, torch.Tensor) and x.is_floating_point()
          else x.cpu() if isinstance(x, torch.Tensor) else x for i, x in enumerate(inputs)]
    want = torch.autograd.grad(ref(*xs), [xs[i] for i in wants], dy.double().cpu())
    for i, g, w in zip(wants, got, want, strict=True):
        assert g.dtype == inputs[i].dtype and g.shape == inputs[i].shape, f"{what} grad {i}: {g.dtype} {g.shape}"
        close(g, w, dtype, f"{what} grad {i}")


# --- row norms: add_layer_norm, embedding_layer_norm, layer_norm_modulate (the shared _norm_backward kernel) -----

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", ["none", "relu", "gelu", "silu"])
def test_add_layer_norm_backward(kernels_on_cpu, monkeypatch, dtype, activation):
    calls = spy(monkeypatch, aln, "fused_norm_backward_launch")
    x = rnd((2, 3, 37), 1, dtype, 2.0, 3.0)  # |mean| > std: no cancellation in the recomputed statistics
    res, w, b, pb = rnd((2, 3, 37), 2, dtype), rnd((37,), 3, dtype), rnd((37,), 4, dtype), rnd((37,), 5, dtype)
    check_backward(lambda x, r, w, b, p: aln.add_layer_norm(x, r, w, b, pre_bias=p, activation=activation),
                   lambda x, r, w, b, p: aln.add_layer_norm_ref(x, r, w, b, p, 1e-5, activation),
                   [x, res, w, b, pb], [0, 1, 2, 3, 4], dtype, f"add_layer_norm {activation}", calls)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_add_layer_norm_backward_without_parameters(kernels_on_cpu, monkeypatch, dtype):
    """No residual, weight, bias or pre_bias; a transposed (non-contiguous) input; an expanded output gradient."""
    calls = spy(monkeypatch, aln, "fused_norm_backward_launch")
    x = rnd((33, 4), 6, dtype).t()
    check_backward(aln.add_layer_norm, aln.add_layer_norm_ref, [x], [0], dtype, "add_layer_norm bare", calls,
                   sum_loss=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_embedding_layer_norm_backward(kernels_on_cpu, monkeypatch, dtype):
    """Repeated ids accumulate into one table row; position rows past the sequence get zeros."""
    calls = spy(monkeypatch, eln, "fused_norm_backward_launch")
    ids = torch.tensor([[3, 1, 3, 0, 6], [3, 3, 2, 1, 1]], device=DEV)
    tok, pos = rnd((7, 37), 7, dtype), rnd((8, 37), 8, dtype)
    w, b = rnd((37,), 9, dtype), rnd((37,), 10, dtype)
    check_backward(eln.embedding_layer_norm, eln.embedding_layer_norm_ref, [ids, tok, pos, w, b], [1, 2, 3, 4], dtype,
                   "embedding_layer_norm", calls)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_layer_norm_modulate_backward(kernels_on_cpu, monkeypatch, dtype):
    calls = spy(monkeypatch, lnm, "fused_norm_backward_launch")
    x, shift, scale = rnd((3, 5, 37), 11, dtype, 2.0), rnd((3, 37), 12, dtype), rnd((3, 37), 13, dtype)
    check_backward(lnm.layer_norm_modulate, lnm.layer_norm_modulate_ref, [x, shift, scale], [0, 1, 2], dtype,
                   "layer_norm_modulate", calls)


@pytest.mark.parametrize("programs", [1, 2, 5])
def test_fused_norm_backward_launcher_splits_rows_and_groups(programs):
    """The persistent grid: several programs per row group, each walking several rows (modulation, RMS + gelu)."""
    x, dy = rnd((4, 7, 21), 14), rnd((4, 7, 21), 15)
    shift, scale = rnd((4, 21), 16), rnd((4, 21), 17)
    dx, dscale, dshift, _ = nb.fused_norm_backward_launch(x, dy, 28, 1e-6, scale=scale, shift=shift, mod_group=7,
                                                          programs=programs)
    xs = [t.double().cpu().requires_grad_(True) for t in (x, shift, scale)]
    want = torch.autograd.grad(lnm.layer_norm_modulate_ref(*xs), xs, dy.double().cpu())
    for got, w, what in zip((dx, dshift, dscale), want, ("dx", "dshift", "dscale"), strict=True):
        close(got, w, torch.float32, what)
    w_, b_ = rnd((21,), 18), rnd((21,), 19)
    dx, dw, db, _ = nb.fused_norm_backward_launch(x, dy, 28, 1e-6, rms=True, weight=w_, bias=b_, activation="gelu",
                                                  programs=programs)
    xs = [t.double().cpu().requires_grad_(True) for t in (x, w_, b_)]
    xf, wf, bf = xs
    ref = torch.nn.functional.gelu(xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * wf + bf)
    want = torch.autograd.grad(ref, xs, dy.double().cpu())
    for got, w, what in zip((dx, dw, db), want, ("dx", "dweight", "dbias"), strict=True):
        close(got, w, torch.float32, what)


# --- channel norms -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_group_norm_backward(kernels_on_cpu, monkeypatch, dtype):
    calls = spy(monkeypatch, gn, "group_norm_backward_launch")
    x = rnd((2, 5, 7, 6), 20, dtype, 2.0, 5.0).permute(0, 3, 1, 2)  # (2, 6, 5, 7), non-contiguous, mean 5
    w, b = rnd((6,), 21, dtype), rnd((6,), 22, dtype)
    check_backward(lambda x, w, b: gn.group_norm(x, 3, w, b), lambda x, w, b: gn.group_norm_ref(x, 3, w, b),
                   [x, w, b], [0, 1, 2], dtype, "group_norm", calls)


@pytest.mark.parametrize("groups", [1, 3, 6])
def test_group_norm_backward_with_split_groups_and_planes(groups):
    """A config small enough that the statistics and the plane sums are split in several chunks (one empty)."""
    cfg = {"BLOCK": 16, "CHUNK": 32, "num_warps": 4}
    x, w, dy = rnd((2, 6, 5, 7), 23, scale=3.0, shift=-2.0), rnd((6,), 24), rnd((2, 6, 5, 7), 25)
    gx, dw, db = gn.group_norm_backward_launch(x, groups, w, dy, 1e-5, config=cfg)
    xs = [t.double().cpu().requires_grad_(True) for t in (x, w, torch.zeros(6))]
    want = torch.autograd.grad(gn.group_norm_ref(xs[0], groups, xs[1], xs[2]), xs, dy.double().cpu())
    for got, ww, what in zip((gx, dw, db), want, ("dx", "dweight", "dbias"), strict=True):
        close(got, ww, torch.float32, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_batch_norm_backward(kernels_on_cpu, monkeypatch, dtype):
    calls = spy(monkeypatch, bn, "batch_norm_backward_launch")
    x = rnd((3, 4, 5, 6), 26, dtype, 2.0, 1.0)
    rm, rv = rnd((4,), 27, dtype), (rnd((4,), 28, dtype).abs() + 0.5).to(dtype)
    w, b = rnd((4,), 29, dtype), rnd((4,), 30, dtype)
    check_backward(bn.batch_norm, bn.batch_norm_ref, [x, rm, rv, w, b], [0, 3, 4], dtype, "batch_norm", calls)


def test_batch_norm_backward_with_split_planes():
    cfg = {"BLOCK": 16, "CHUNK": 16, "num_warps": 4}
    x, dy = rnd((2, 3, 7, 5), 31), rnd((2, 3, 7, 5), 32)
    rm, rv, w = rnd((3,), 33), rnd((3,), 34).abs() + 0.5, rnd((3,), 35)
    gx, dw, db = bn.batch_norm_backward_launch(x, rm, rv, w, dy, 1e-5, config=cfg)
    xs = [t.double().cpu().requires_grad_(i in (0, 3, 4)) for i, t in enumerate((x, rm, rv, w, torch.zeros(3)))]
    want = torch.autograd.grad(bn.batch_norm_ref(*xs), [xs[0], xs[3], xs[4]], dy.double().cpu())
    for got, ww, what in zip((gx, dw, db), want, ("dx", "dweight", "dbias"), strict=True):
        close(got, ww, torch.float32, what)


# --- bias epilogues and rotary -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", ["none", "relu", "gelu", "silu"])
@pytest.mark.parametrize("channel_dim, shape", [(-1, (5, 7, 19)), (1, (3, 6, 5, 9))])
def test_bias_act_backward(kernels_on_cpu, monkeypatch, dtype, activation, channel_dim, shape):
    calls = spy(monkeypatch, ba, "bias_act_backward_launch")
    c = shape[channel_dim]
    x, w, b, r = rnd(shape, 36, dtype, 2.0), rnd((c,), 37, dtype), rnd((c,), 38, dtype), rnd(shape, 39, dtype)
    check_backward(lambda x, w, b, r: ba.bias_act(x, w, b, r, scale=0.5, activation=activation,
                                                  channel_dim=channel_dim),
                   lambda x, w, b, r: ba.bias_act_ref(x, w, b, r, 0.5, activation, channel_dim),
                   [x, w, b, r], [0, 1, 2, 3], dtype, f"bias_act {activation} dim {channel_dim}", calls)


@pytest.mark.parametrize("channel_dim, shape", [(-1, (5, 7, 19)), (1, (3, 6, 5, 9))])
@pytest.mark.parametrize("programs", [1, 2, 7])
def test_bias_act_backward_walks_the_reduction_axis(channel_dim, shape, programs):
    """Small tiles: each program walks several tiles along the reduction axis (rows, or spatial columns)."""
    c = shape[channel_dim]
    x, w, b, dy = rnd(shape, 40, scale=2.0), rnd((c,), 41), rnd((c,), 42), rnd(shape, 43)
    gx, dw, db = ba.bias_act_backward_launch(x, w, b, dy, 1.5, "silu", channel_dim,
                                             config={"BLOCK": 16, "num_warps": 4, "PROGRAMS_PER_SM": 1},
                                             programs=programs)
    xs = [t.double().cpu().requires_grad_(True) for t in (x, w, b)]
    want = torch.autograd.grad(ba.bias_act_ref(*xs, None, 1.5, "silu", channel_dim), xs, dy.double().cpu())
    for got, ww, what in zip((gx, dw, db), want, ("dx", "dweight", "dbias"), strict=True):
        close(got, ww, torch.float32, what)


def test_bias_act_backward_residual_only(kernels_on_cpu, monkeypatch):
    """Only the residual wants a gradient: it is the output gradient, no kernel runs."""
    calls = spy(monkeypatch, ba, "bias_act_backward_launch")
    x, r = rnd((4, 6), 44), rnd((4, 6), 45).requires_grad_(True)
    out = ba.bias_act(x, None, rnd((6,), 46), r, activation="relu")
    dy = rnd((4, 6), 47)
    (g,) = torch.autograd.grad(out, [r], dy)
    assert torch.equal(g, dy) and calls == []


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", ["none", "relu", "gelu", "silu"])
def test_bias_act_mean_backward(kernels_on_cpu, monkeypatch, dtype, activation):
    calls = spy(monkeypatch, bam, "bias_act_mean_backward_launch")
    x, w, b = rnd((3, 5, 4, 7), 48, dtype, 2.0), rnd((5,), 49, dtype), rnd((5,), 50, dtype)
    check_backward(lambda x, w, b: bam.bias_act_mean(x, w, b, activation=activation),
                   lambda x, w, b: bam.bias_act_mean_ref(x, w, b, activation), [x, w, b], [0, 1, 2], dtype,
                   f"bias_act_mean {activation}", calls)


def test_bias_act_mean_backward_with_small_tiles():
    x, w, b, dy = rnd((3, 5, 4, 7), 51), rnd((5,), 52), rnd((5,), 53), rnd((3, 5), 54)
    gx, dw, db = bam.bias_act_mean_backward_launch(x, w, b, dy, "gelu",
                                                   config={"TILE": 64, "MAX_BLOCK_N": 16, "num_warps": 4})
    xs = [t.double().cpu().requires_grad_(True) for t in (x, w, b)]
    want = torch.autograd.grad(bam.bias_act_mean_ref(*xs, "gelu"), xs, dy.double().cpu())
    for got, ww, what in zip((gx, dw, db), want, ("dx", "dweight", "dbias"), strict=True):
        close(got, ww, torch.float32, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("with_bias", [True, False])
def test_bias_glu_backward(kernels_on_cpu, monkeypatch, dtype, with_bias):
    calls = spy(monkeypatch, bg, "bias_glu_backward_launch")
    x, b = rnd((3, 8, 5, 7), 55, dtype, 2.0), rnd((8,), 56, dtype)
    inputs, wants = ([x, b], [0, 1]) if with_bias else ([x], [0])
    check_backward(bg.bias_glu, bg.bias_glu_ref, inputs, wants, dtype, "bias_glu", calls)


def test_bias_glu_backward_with_small_tiles():
    x, b, dy = rnd((3, 8, 5, 7), 57, scale=2.0), rnd((8,), 58), rnd((3, 4, 5, 7), 59)
    gx, db = bg.bias_glu_backward_launch(x, b, dy, config={"BLOCK": 16, "num_warps": 4})
    xs = [t.double().cpu().requires_grad_(True) for t in (x, b)]
    want = torch.autograd.grad(bg.bias_glu_ref(*xs), xs, dy.double().cpu())
    close(gx, want[0], torch.float32, "dx")
    close(db, want[1], torch.float32, "dbias")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rotary_backward_is_the_transposed_rotation(kernels_on_cpu, monkeypatch, dtype):
    calls = spy(monkeypatch, ro, "rotary_launch")
    x = rnd((2, 3, 5, 8), 60, dtype)
    cos, sin = ro.rotary_tables(5, rnd((4,), 61).abs())
    c64, s64 = cos.double().cpu(), sin.double().cpu()
    check_backward(lambda x: ro.rotary(x, cos, sin), lambda x: ro.rotary_ref(x, c64, s64), [x], [0], dtype, "rotary",
                   calls)


# --- dispatch ------------------------------------------------------------------------------------------------------

def _fast_args(name, dtype):
    """(fast backward, its saved arguments, output gradients, needs_input_grad) of op ``name``."""
    x4, c8 = rnd((2, 8, 3, 5), 62, dtype), rnd((8,), 63, dtype)
    r3, x_rot = rnd((2, 3, 8), 64, dtype), rnd((2, 3, 5, 8), 65, dtype)
    cos, sin = ro.rotary_tables(5, rnd((4,), 66).abs())
    return {
        "group_norm": (gn._group_norm_backward, [x4, 2, c8, c8, 1e-5], [x4], (True, False, True, True, False)),
        "batch_norm": (bn._batch_norm_backward, [x4, c8, c8.abs(), c8, c8, 1e-5], [x4],
                       (True, False, False, True, True, False)),
        "add_layer_norm": (aln._add_layer_norm_backward, [r3, r3, c8, c8, c8, 1e-5, "gelu"], [r3],
                           (True,) * 5 + (False, False)),
        "embedding_layer_norm": (eln._embedding_layer_norm_backward,
                                 [torch.zeros(2, 3, dtype=torch.long, device=DEV), r3[0], r3[1], c8, c8, 1e-5], [r3],
                                 (False, True, True, True, True, False)),
        "layer_norm_modulate": (lnm._layer_norm_modulate_backward, [r3, r3[:, 0], r3[:, 1], 1e-6], [r3],
                                (True, True, True, False)),
        "bias_act": (ba._bias_act_backward, [r3, c8, c8, r3, 1.0, "silu", -1], [r3], (True,) * 4 + (False,) * 3),
        "bias_act_mean": (bam._bias_act_mean_backward, [x4, c8, c8, "relu"], [x4[..., 0, 0]],
                          (True, True, True, False)),
        "bias_glu": (bg._bias_glu_backward, [x4, c8], [x4[:, :4]], (True, True)),
        "rotary": (ro._rotary_backward, [x_rot, cos, sin], [x_rot], (True, False, False)),
    }[name]


@pytest.mark.parametrize("name", OPS)
def test_fast_backward_declines_off_the_kernels(name):
    """CPU tensors (and, where the kernels otherwise apply, float64 and a missing output gradient) fall back to
    the reference's VJP: the fast backward returns None."""
    assert registry.has_backward_kernels(name)
    fast, args, grads, needs = _fast_args(name, torch.float32)
    if DEV == "cpu":
        assert fast(args, grads, needs) is None
    fast, args, grads, needs = _fast_args(name, torch.float64)
    assert fast(args, grads, needs) is None
    assert fast(args, [None], needs) is None


def test_fast_backward_declines_gradients_it_does_not_compute(kernels_on_cpu):
    """Running statistics (no gradient in PyTorch either) and rotary tables go through the reference."""
    fast, args, grads, needs = _fast_args("batch_norm", torch.float32)
    assert fast(args, grads, (True, True, False, True, True, False)) is None
    fast, args, grads, needs = _fast_args("rotary", torch.float32)
    assert fast(args, grads, (True, False, True)) is None
