"""The zoo's backward kernels (row norms, SwiGLU, GeGLU, RoPE, cross-entropy, JSD, KL, the activations) against the autograd of their
PyTorch references, per dtype, on odd shapes (Triton's interpreter on a CPU-only machine, the GPU where there is
one); and the registry's rule that an op's backward kernels run where they apply and the reference's VJP
everywhere else."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry
from cudal1.kernelzoo.ops import cross_entropy_loss as ce
from cudal1.kernelzoo.ops import geglu as gg
from cudal1.kernelzoo.ops import layer_norm as ln
from cudal1.kernelzoo.ops import rms_norm as rn
from cudal1.kernelzoo.ops import rope_qk as rq
from cudal1.kernelzoo.ops import swiglu as sg
from cudal1.kernelzoo.ops._norm_backward import norm_backward_launch
from cudal1.kernelzoo.registry import zoo_custom_op

from .helpers import DEV, close_scaled, rnd

#: (atol, rtol) of a gradient against the fp64 reference, per dtype: fp32 math, one rounding at the store
TOL = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (5e-2, 5e-2), torch.float16: (5e-3, 5e-3)}


def ref_grads(fn, inputs, grads_out):
    """Gradients of ``fn`` at ``inputs`` (rounded to their dtype, then computed in fp64 on the CPU)."""
    xs = [x.detach().double().cpu().requires_grad_(x.is_floating_point()) for x in inputs]
    out = fn(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    wrt = [x for x in xs if x.requires_grad]
    return torch.autograd.grad(outs, wrt, [g.double().cpu() for g in grads_out])


def close(got, want, dtype, what):
    close_scaled(got, want, TOL[dtype], f"{what} ({dtype})")


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("shape, programs", [((3, 40), 2), ((2, 3, 33), 4), ((1, 1), 1), ((7, 16), 3)])
@pytest.mark.parametrize("kind", ["rms", "layer", "rms+dh"])
def test_norm_backward_kernel(kind, dtype, shape, programs):
    x, w, dy = rnd(shape, 1, dtype, 2.0), rnd(shape[-1:], 2, dtype), rnd(shape, 3, dtype)
    b = rnd(shape[-1:], 4, dtype)
    dh = rnd(shape, 5, dtype) if kind == "rms+dh" else None
    dx, dw, db = norm_backward_launch(x, w, dy, 1e-6, rms=kind != "layer", dh=dh, bias=kind == "layer",
                                      programs=programs)
    assert dx.dtype == dtype and dx.shape == x.shape and dw.dtype == w.dtype and dw.shape == w.shape
    if kind == "layer":
        want = ref_grads(lambda x, w, b: ln.layer_norm_ref(x, w, b, 1e-6), (x, w, b), (dy,))
        close(db, want[2], dtype, "dbias")
    else:
        want = ref_grads(lambda x, w: rn.rms_norm_ref(x, w, 1e-6), (x, w), (dy,))
        assert db is None
    close(dx, want[0] + (dh.double().cpu() if dh is not None else 0), dtype, "dx")
    close(dw, want[1], dtype, "dweight")


def test_norm_backward_refuses_rows_past_its_limit():
    x = torch.randn(2, 40)
    with pytest.raises(ValueError, match="MAX_N"):
        norm_backward_launch(x, torch.ones(40), x, 1e-6, rms=True, config={"MAX_N": 32, "PROGRAMS_PER_SM": 1,
                                                                           "num_warps": 1})


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("which", ["swiglu", "geglu-tanh", "geglu-none"])
def test_gated_activation_backward_kernels(which, dtype):
    shape = (5, 37)
    g, u, dy = rnd(shape, 6, dtype, 3.0), rnd(shape, 7, dtype), rnd(shape, 8, dtype)
    cfg = {"BLOCK": 64, "num_warps": 4}
    if which == "swiglu":
        dg, du = sg.swiglu_backward_launch(g, u, dy, config=cfg)
        want = ref_grads(sg.swiglu_ref, (g, u), (dy,))
    else:
        approx = which.split("-")[1]
        dg, du = gg.geglu_backward_launch(g, u, dy, approx, config=cfg)
        want = ref_grads(lambda g, u: gg.geglu_ref(g, u, approx), (g, u), (dy,))
    assert dg.dtype == du.dtype == dtype
    close(dg, want[0], dtype, "dgate")
    close(du, want[1], dtype, "dup")


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("positions", [False, True])
def test_rope_qk_backward_is_the_transposed_rotation(dtype, positions):
    q = rnd((2, 5, 3, 8), 9, dtype).transpose(1, 2)  # (B, H, S, D) as a transposed view
    k = rnd((2, 1, 5, 8), 10, dtype)
    if positions:
        cos, sin = rnd((11, 8), 11, dtype), rnd((11, 8), 12, dtype)  # unrelated halves: s1 != s2
        pos = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(0)).to(DEV)
    else:
        cos, sin, pos = rnd((2, 5, 8), 11, dtype), rnd((2, 5, 8), 12, dtype), None
    dq, dk = rnd(q.shape, 13, dtype), rnd(k.shape, 14, dtype)
    gq, gk = rq.rope_qk_launch(dq, dk, cos, sin, pos, backward=True)
    want = ref_grads(lambda q, k: rq.rope_qk_ref(q, k, cos.double().cpu(), sin.double().cpu(),
                                                  None if pos is None else pos.cpu()), (q, k), (dq, dk))
    assert gq.shape == q.shape and gk.shape == k.shape
    close(gq, want[0], dtype, "dq")
    close(gk, want[1], dtype, "dk")


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("n_cols, block", [(37, 16), (300, 64)])
def test_cross_entropy_backward_kernel(dtype, n_cols, block):
    logits = rnd((6, n_cols), 15, dtype, 3.0)
    targets = torch.tensor([0, n_cols - 1, -100, 3, 7, -100], device=DEV)
    g = rnd((6,), 16, torch.float32).to(dtype)
    dx = ce.cross_entropy_loss_backward_launch(logits, targets, g, -100, config={"BLOCK": block, "num_warps": 4})
    want = ref_grads(lambda z: ce.cross_entropy_loss_ref(z, targets.cpu(), -100), (logits,), (g,))
    assert dx.dtype == dtype
    assert torch.count_nonzero(dx[2]) == 0 and torch.count_nonzero(dx[5]) == 0  # ignored rows
    close(dx, want[0], dtype, "dlogits")


# --- the registry's dispatch between an op's backward kernels and its reference's VJP ---------------------------

_FAST_CALLS: list[str] = []


def _fast_triple(args, grads, needs):
    (_x, mode), (dy,) = args, grads
    if mode == "decline":  # kernels that do not apply say so; the reference's VJP must run
        _FAST_CALLS.append("declined")
        return None
    _FAST_CALLS.append("ran")
    return (dy * 3, None)


@zoo_custom_op("cudal1::test_triple", mutates_args=(), ref=lambda x, mode: x * 3, fast_backward=_fast_triple)
def _triple(x: torch.Tensor, mode: str) -> torch.Tensor:
    return x * 3


@_triple.register_fake
def _(x, mode):
    return torch.empty_like(x)


@pytest.mark.parametrize("mode, expect", [("use", "ran"), ("decline", "declined")])
def test_backward_kernels_run_where_they_apply_and_the_reference_elsewhere(mode, expect):
    _FAST_CALLS.clear()
    x = torch.randn(5, requires_grad=True)
    w = torch.randn(5)
    (registry.call("test_triple", x, mode) * w).sum().backward()
    assert _FAST_CALLS == [expect]
    torch.testing.assert_close(x.grad, 3 * w)  # both ways give the gradient


def test_fast_backward_needs_the_reference_as_fallback():
    with pytest.raises(ValueError, match="fast_backward= needs ref="):
        zoo_custom_op("cudal1::test_no_fallback", mutates_args=(), fast_backward=_fast_triple)


def test_every_differentiable_op_has_a_backward_of_its_own():
    """Issue 17 item 1: no zoo op differentiates through its reference's VJP (a recompute of the reference forward,
    then its backward) where it has a backward of its own; the registry's fallback stays for CPU, float64 and the
    shapes an op's kernels do not take (test_backward_kernels_run_where_they_apply_and_the_reference_elsewhere)."""
    ops = [n for n in registry.differentiable_ops() if not n.startswith("test_")]
    assert len(ops) > 40
    assert [n for n in ops if not registry.has_backward_kernels(n)] == []


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
def test_jsd_backward_kernel(dtype, beta, reduction):
    from cudal1.kernelzoo.ops import jsd as js

    log_q = torch.log_softmax(rnd((5, 37), 17, torch.float32, 2.0), -1).to(dtype)
    log_p = torch.log_softmax(rnd((5, 37), 18, torch.float32, 2.0), -1).to(dtype)
    labels = torch.tensor([0, -100, 2, 1, -100], device=DEV)
    g = rnd((5,) if reduction == "none" else (), 19, torch.float32)
    w = js._row_weights(g, 5, labels, -100, reduction)
    dq = js.jsd_backward_launch(log_q, log_p, w, beta, config={"BLOCK": 16, "num_warps": 4})
    want = ref_grads(lambda q: js.jsd_ref(q, log_p.double().cpu(), labels.cpu(), beta, -100, reduction), (log_q,), (g,))
    assert dq.dtype == dtype and torch.count_nonzero(dq[1]) == 0
    close(dq, want[0], dtype, "dlog_q")


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
def test_kl_div_backward_kernel(dtype):
    from cudal1.kernelzoo.ops import kl_div_loss as kl

    log_q = torch.log_softmax(rnd((2, 3, 37), 20, torch.float32), -1).to(dtype)
    p = torch.softmax(rnd((2, 3, 37), 21, torch.float32), -1).to(dtype)
    g = rnd((2, 3), 22, torch.float32)
    dq = kl.kl_div_loss_backward_launch(log_q, p, g, config={"BLOCK": 16, "num_warps": 4})
    want = ref_grads(lambda q: kl.kl_div_loss_ref(q, p.double().cpu()), (log_q,), (g,))
    close(dq, want[0], dtype, "dlog_q")


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_fused_cross_entropy_kernel_gives_the_loss_and_its_gradient(dtype, reduction, smoothing):
    from cudal1.kernelzoo.ops import cross_entropy_fused as cf

    logits = rnd((6, 37), 23, dtype, 3.0)
    targets = torch.tensor([0, 36, -100, 3, 7, -100], device=DEV)
    loss, dz = cf.cross_entropy_fused_launch(logits, targets, -100, smoothing, reduction, True,
                                             config={"BLOCK": 16, "num_warps": 4})
    z = logits.detach().double().cpu().requires_grad_(True)
    want = torch.nn.functional.cross_entropy(z, targets.cpu(), ignore_index=-100, label_smoothing=smoothing,
                                             reduction=reduction)
    want.backward()
    assert loss.dtype == torch.float32 and dz.dtype == dtype
    close(loss.reshape(1), want.detach().reshape(1), dtype, "loss")
    close(dz, z.grad, dtype, "dlogits")


@pytest.mark.parametrize("g", [1.0, 3.0])
def test_fused_cross_entropy_backward_scales_by_the_incoming_gradient(g):
    """fp64 on the CPU through the registered op (the same autograd path as CUDA): gradcheck, and the g == 1
    shortcut gives the same gradient as a scaled one divided back."""
    from cudal1.kernelzoo import cross_entropy

    z = torch.randn(5, 9, dtype=torch.float64, requires_grad=True)
    t = torch.tensor([1, -100, 8, 0, 4])
    assert torch.autograd.gradcheck(lambda z: cross_entropy(z, t, label_smoothing=0.2), (z,))
    (g * cross_entropy(z, t)).backward()
    z2 = z.detach().clone().requires_grad_(True)
    (g * torch.nn.functional.cross_entropy(z2, t)).backward()
    torch.testing.assert_close(z.grad, z2.grad, rtol=1e-10, atol=1e-12)


def test_gradient_buffers_handed_out_are_recomputed_on_a_second_backward():
    """The fused losses hand their gradient buffers to autograd (no copy); a second backward of the same graph
    (retain_graph) must recompute them, not return what the first caller may have changed."""
    from cudal1.kernelzoo import cross_entropy, fused_linear_cross_entropy

    z = torch.randn(5, 9, dtype=torch.float64, requires_grad=True)
    t = torch.tensor([1, -100, 8, 0, 4])
    loss = cross_entropy(z, t)
    loss.backward(retain_graph=True)
    first = z.grad.clone()
    z.grad.mul_(100)  # the handed-out buffer, changed by its new owner
    z.grad = None
    loss.backward()
    torch.testing.assert_close(z.grad, first)
    x, w = torch.randn(5, 4, dtype=torch.float64, requires_grad=True), torch.randn(9, 4, dtype=torch.float64)
    loss = fused_linear_cross_entropy(x, w, t)
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    x.grad.zero_()
    x.grad = None
    loss.backward()
    torch.testing.assert_close(x.grad, first)


@pytest.mark.parametrize("dtype", list(TOL), ids=str)
@pytest.mark.parametrize("name, scalars", [("relu", ()), ("gelu", ()), ("silu", ()), ("tanh", ()), ("elu", (0.7,)),
                                           ("hardswish", ()), ("leaky_relu", (0.1,)), ("softplus", (1.5, 5.0))])
def test_activation_backward_kernel(name, scalars, dtype):
    import torch.nn.functional as F

    from cudal1.kernelzoo.ops._activation_backward import activation_backward_launch

    refs = {"relu": torch.relu, "gelu": F.gelu, "silu": F.silu, "tanh": torch.tanh, "elu": F.elu,
            "hardswish": F.hardswish, "leaky_relu": F.leaky_relu, "softplus": F.softplus}
    x = rnd((7, 45), 24, dtype, 4.0)  # both sides of every kink, softplus's threshold (x * 1.5 > 5) included
    x[0, :6] = torch.tensor([-3.0, 3.0, 0.0, -0.0, 5.0 / 1.5, 20.0])  # the kinks themselves, as torch takes them
    dy = rnd((7, 45), 25, dtype)
    dx = activation_backward_launch(name, x, dy, *scalars, config={"BLOCK": 64, "num_warps": 4})
    want = ref_grads(lambda t: refs[name](t, *scalars), (x,), (dy,))
    assert dx.dtype == dtype
    close(dx, want[0], dtype, f"{name} dx")
