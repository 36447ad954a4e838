"""Every zoo op trains or says it cannot: each differentiable op's gradient (registered with
torch.library.register_autograd, one path for eager, torch.compile and the CPU fallback) is checked
numerically in fp64 and against the PyTorch reference's autograd; ops without a gradient refuse inputs that
require grad; and an op whose kernel returns a fresh tensor (as every Triton/CUDA launcher does) still
passes gradients on, where the old eager fast path cut the graph silently."""

from __future__ import annotations

import pytest
import torch

import cudal1.kernelzoo  # noqa: F401  (registers every op)
from cudal1.kernelzoo import registry
from cudal1.kernelzoo.registry import NoGradientError, call, zoo_custom_op

D = torch.float64


def r(*shape, positive=False):
    g = torch.randn(*shape, dtype=D)
    return g.abs() + 0.5 if positive else g


def ids(high, *shape):
    return torch.randint(0, high, shape)


#: op -> builder of its positional arguments (fp64, CPU, small: gradcheck perturbs every element)
CASES = {
    "add_layer_norm": lambda: (r(2, 3, 8), r(2, 3, 8), r(8), r(8), r(8), 1e-5, "gelu"),
    "add_rms_norm": lambda: (r(2, 3, 8), r(2, 3, 8), r(8), 1e-6),
    "avg_pool2d": lambda: (r(1, 2, 6, 6), [2, 2], [2, 2], [1, 1], False),
    "avg_pool3d": lambda: (r(1, 2, 4, 4, 4), [2, 2, 2], [2, 2, 2], [0, 0, 0], True),
    "batch_norm": lambda: (r(2, 3, 4, 4), r(3), r(3, positive=True), r(3), r(3), 1e-5),
    "bce_with_logits_mean": lambda: (r(4, 5), torch.rand(4, 5, dtype=D), r(5)),
    "bias_act": lambda: (r(2, 3, 4, 4), r(3), r(3), r(2, 3, 4, 4), 0.5, "silu", 1),
    "bias_act_mean": lambda: (r(2, 3, 4, 4), r(3), r(3), "gelu"),
    "bias_glu": lambda: (r(2, 6, 3, 3), r(6)),
    "bias_relu_max_pool2d": lambda: (r(2, 3, 4, 4), r(3)),
    "cosine_embedding_loss": lambda: (r(4, 6), r(4, 6), torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=D), 0.1),
    "cross_entropy_loss": lambda: (r(5, 7), torch.tensor([0, 6, -100, 3, 2]), -100),
    "cumsum": lambda: (r(3, 6), 1),
    "depthwise_conv2d": lambda: (r(1, 3, 6, 6), r(3, 1, 3, 3), r(3), 1, 1),
    "diag_matmul": lambda: (r(5), r(5, 4)),
    "elu": lambda: (r(4, 7), 0.7),
    "embedding_layer_norm": lambda: (ids(10, 2, 3), r(10, 8), r(4, 8), r(8), r(8), 1e-5),
    "geglu": lambda: (r(4, 7), r(4, 7), "tanh"),
    "gelu": lambda: (r(4, 7),),
    "group_norm": lambda: (r(2, 4, 3, 3), 2, r(4), r(4), 1e-5),
    "hardswish": lambda: (r(4, 7) * 4,),
    "jsd": lambda: (torch.log_softmax(r(4, 6), -1), torch.log_softmax(r(4, 6), -1), torch.tensor([0, -100, 2, 1]),
                    0.3, -100, "batchmean"),
    "kl_div_loss": lambda: (torch.log_softmax(r(3, 6), -1), torch.softmax(r(3, 6), -1)),
    "l2_normalize": lambda: (r(4, 6), 1e-12),
    "layer_norm": lambda: (r(3, 8), r(8), r(8), 1e-5),
    "layer_norm_modulate": lambda: (r(2, 3, 8), r(2, 8), r(2, 8), 1e-6),
    "leaky_relu": lambda: (r(4, 7), 0.1),
    "log_softmax": lambda: (r(4, 7),),
    "matmul": lambda: (r(4, 5), r(5, 3)),
    "matvec": lambda: (r(4, 5), r(5)),
    "max_dim": lambda: (r(4, 7), 1, False),
    "max_pool2d": lambda: (r(1, 2, 6, 6), [2, 2], [2, 2], [0, 0]),
    "mean_dim": lambda: (r(4, 5, 3), 1, True),
    "mse_loss": lambda: (r(4, 7), r(4, 7)),
    "relu": lambda: (r(4, 7),),
    "rms_norm": lambda: (r(3, 8), r(8), 1e-6),
    "rope_qk": lambda: (r(2, 3, 5, 8), r(2, 1, 5, 8), r(1, 5, 8), r(1, 5, 8), None),
    "rotary": lambda: (r(2, 5, 8), r(5, 4), r(5, 4)),
    "silu": lambda: (r(4, 7),),
    "smooth_l1_loss": lambda: (r(4, 7), r(4, 7), 0.5),
    "softmax": lambda: (r(4, 7),),
    "softplus": lambda: (r(4, 7) * 10, 1.5, 5.0),
    "sum_dim": lambda: (r(4, 5, 3), 0, False),
    "swiglu": lambda: (r(4, 6), r(4, 6)),
    "tanh": lambda: (r(4, 7),),
    "triplet_margin_loss": lambda: (r(4, 6), r(4, 6), r(4, 6), 1.0, 1e-6, True),
}


#: inputs that are state, not parameters (torch's batch norm has no gradient for its running statistics)
CONSTANT = {"batch_norm": {1, 2}}


#: ops with a backward of their own, tested in their own file
OWN_TESTS = {"fused_linear_cross_entropy": "test_fused_linear_cross_entropy.py",
             "cross_entropy_fused": "test_backward_kernels.py"}


def test_every_differentiable_op_has_a_gradient_case():
    assert sorted([*CASES, *OWN_TESTS]) == [n for n in registry.differentiable_ops() if not n.startswith("test_")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_the_reference_and_finite_differences(name):
    torch.manual_seed(0)
    args = CASES[name]()
    wrt = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()
           and i not in CONSTANT.get(name, ())]

    def f(*xs):
        full = list(args)
        for i, x in zip(wrt, xs, strict=True):
            full[i] = x
        return call(name, *full)

    xs = [args[i].clone().requires_grad_(True) for i in wrt]
    assert torch.autograd.gradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-4, nondet_tol=0.0)
    out = f(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    assert all(o.requires_grad and o.grad_fn is not None for o in outs)
    ws = [torch.randn_like(o) for o in outs]
    got = torch.autograd.grad(outs, xs, ws, allow_unused=True)
    ys = [args[i].clone().requires_grad_(True) for i in wrt]
    full = list(args)
    for i, y in zip(wrt, ys, strict=True):
        full[i] = y
    want_out = registry.reference(name)(*full)
    want = torch.autograd.grad(want_out if isinstance(want_out, tuple) else (want_out,), ys, ws, allow_unused=True)
    for g, e in zip(got, want, strict=True):
        torch.testing.assert_close(g, e if e is not None else torch.zeros_like(g), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, args", [
    ("argmax_dim", lambda x: (x, 1, False)),
    ("swiglu_", lambda x: (x, torch.randn(3, 4))),
    ("bias_act_", lambda x: (x, None, None, None, 1.0, "relu", -1)),
    ("add_layer_norm_", lambda x: (x, None, None, None, None, 1e-5, "none")),
])
def test_ops_without_a_gradient_refuse_inputs_that_require_grad(name, args):
    x = torch.randn(3, 4, requires_grad=True)
    with pytest.raises(NoGradientError, match=f"{name} has no gradient.*torch.no_grad"):
        call(name, *args(x))
    with torch.no_grad():  # the legitimate twin: the same call without grad mode runs
        call(name, *args(x.detach().clone()))
    call(name, *args(x.detach().clone()))


# an op whose implementation returns a new tensor with no autograd history, as a GPU kernel launcher does
@zoo_custom_op("cudal1::test_fresh_double", mutates_args=(), ref=lambda x: x * 2)
def _fresh_double(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x).copy_(x.detach() * 2)


@_fresh_double.register_fake
def _(x):
    return torch.empty_like(x)


def test_a_kernel_returning_a_fresh_tensor_still_passes_gradients_on():
    """Adversarial for the old eager fast path: it called the implementation directly, so a CUDA op's output had
    requires_grad=False and x.grad stayed empty. Now an input that requires grad goes through the op's autograd."""
    x = torch.randn(6, requires_grad=True)
    y = call("test_fresh_double", x)
    assert y.requires_grad
    (y * torch.arange(6.0)).sum().backward()
    torch.testing.assert_close(x.grad, 2 * torch.arange(6.0))
    # without grad the fast path (the implementation itself) is taken: same values, no graph
    with torch.no_grad():
        z = call("test_fresh_double", x)
    assert not z.requires_grad and torch.equal(z, y.detach())


def test_a_differentiable_op_must_say_how_it_differentiates():
    with pytest.raises(ValueError, match="needs ref="):
        zoo_custom_op("cudal1::test_no_ref", mutates_args=())
    with pytest.raises(ValueError, match="differentiable=False"):
        zoo_custom_op("cudal1::test_mutating", mutates_args=("out",), ref=lambda out: out)


def test_eager_calls_carry_the_registered_gradient_in_a_light_function():
    """Eager calls with grad use an autograd.Function built from the op's registered setup_context and backward
    (the custom op's own autograd wrapper costs ~0.26 ms of host time each way on the H100)."""
    x = torch.randn(3, 8, requires_grad=True)
    y = call("rms_norm", x, torch.ones(8), 1e-6)
    assert type(y.grad_fn).__name__.startswith("ZooOp_rms_norm")
    y = call("rms_norm", x, torch.ones(8), eps=1e-6)  # keywords: the registered op itself
    assert "cudal1_rms_norm" in type(y.grad_fn).__name__


def test_gradients_under_torch_compile_use_the_same_backward():
    x = torch.randn(4, 7, dtype=D, requires_grad=True)
    w = torch.randn(7, dtype=D, requires_grad=True)
    f = torch.compile(lambda x, w: call("rms_norm", x, w, 1e-6).square().sum(), backend="aot_eager", fullgraph=True)
    f(x, w).backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    registry.reference("rms_norm")(x2, w2, 1e-6).square().sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(w.grad, w2.grad)


@pytest.mark.parametrize("name, args", [
    ("softmax", lambda: (torch.arange(12).reshape(3, 4),)),
    ("rms_norm", lambda: (torch.arange(12).reshape(3, 4), torch.ones(4), 1e-6)),
    ("layer_norm", lambda: (torch.randn(3, 4), torch.ones(4, dtype=torch.int32), torch.zeros(4), 1e-5)),
    ("relu", lambda: (torch.tensor([True, False]),)),
])
def test_integer_tensors_where_floats_are_taken_are_refused(name, args):
    """Adversarial: on CUDA a kernel reads an int64 tensor as floats (softmax returned zeros, rms_norm a truncated
    int); the check runs before any kernel, on every device."""
    with pytest.raises(TypeError, match=f"cudal1 op {name}: .* tensor; it takes floating-point tensors"):
        call(name, *args())


def test_index_tensors_stay_integers():
    """The legitimate twin: ids and class targets are integer tensors by nature."""
    ids_, tokens = torch.tensor([[1, 2]]), torch.randn(5, 4)
    out = call("embedding_layer_norm", ids_, tokens, torch.randn(3, 4), torch.ones(4), torch.zeros(4), 1e-5)
    assert out.shape == (1, 2, 4)
    assert call("cross_entropy_loss", torch.randn(2, 3), torch.tensor([0, 2]), -100).shape == (2,)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["softmax", "rms_norm", "layer_norm", "relu", "cumsum"])
def test_float64_on_cuda_runs_the_reference_not_a_float32_kernel(name):
    args = [a.cuda() if isinstance(a, torch.Tensor) else a for a in CASES[name]()]
    got = call(name, *args)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, registry.reference(name)(*args), rtol=0, atol=0)


def test_tensors_on_different_devices_are_refused_before_any_kernel():
    x = torch.randn(3, 4)
    w = torch.ones(4, device="meta")  # another device, available everywhere
    with pytest.raises(ValueError, match="x is on cpu but weight on meta"):
        call("rms_norm", x, w, 1e-6)
