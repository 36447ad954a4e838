"""Backward of the row ops (softmax, log_softmax, l2_normalize) and the dimension reductions (cumsum, sum_dim,
mean_dim, max_dim) against the fp64 autograd of their PyTorch references, per dtype, on odd shapes and edge rows
(-inf, NaN, zero norms, ties), in Triton's interpreter on a CPU-only machine (the GPU where there is one); and
their dispatch: the kernels where they apply, the reference's VJP elsewhere."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry
from cudal1.kernelzoo.ops import _rows_backward as rb
from cudal1.kernelzoo.ops import cumsum as cs
from cudal1.kernelzoo.ops import l2_normalize as l2
from cudal1.kernelzoo.ops import log_softmax as ls
from cudal1.kernelzoo.ops import max_dim as mx
from cudal1.kernelzoo.ops import softmax as sm

from .helpers import DEV, close_scaled, rnd

# the edge rows (-inf, NaN, zero norms) and padded tile rows compute NaN and inf on purpose; NumPy, under the
# interpreter, warns about each
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: (atol, rtol) of a gradient against the fp64 reference, per dtype: fp32 math, one rounding at the store
TOL = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (5e-2, 5e-2), torch.float16: (5e-3, 5e-3)}
DTYPES = list(TOL)
REFS = {"softmax": sm.softmax_ref, "log_softmax": ls.log_softmax_ref,
        "l2_normalize": lambda x: l2.l2_normalize_ref(x, 1e-6)}
#: small configs: "tile" holds rows whole (several per program), "loop" takes every row through the looped kernel
#: in 8-column chunks
PATHS = {"tile": dict(rb.CONFIGS["sm90"], MIN_TILE=128), "loop": dict(rb.CONFIGS["sm90"], MAX_N=1, BLOCK=8)}


def ref_grad(fn, x, dy):
    """Gradient of ``fn`` at ``x`` (rounded to its dtype, then computed in fp64 on the CPU) for ``dy``."""
    xd = x.detach().double().cpu().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(xd), xd, dy.double().cpu())
    return g


def close(got, want, dtype, what):
    close_scaled(got, want, TOL[dtype], f"{what} ({dtype})", equal_nan=True)


# --- softmax, log_softmax, l2_normalize -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("shape", [(3, 37), (2, 3, 33), (1, 1), (5, 16)])
@pytest.mark.parametrize("op", list(REFS))
def test_row_backward_kernel(op, shape, path, dtype):
    x, dy = rnd(shape, 1, dtype, 2.0), rnd(shape, 2, dtype)
    dx = rb.rows_backward_launch(op, x, dy, 1e-6, config=PATHS[path])
    assert dx.dtype == dtype and dx.shape == x.shape
    close(dx, ref_grad(REFS[op], x, dy), dtype, f"{op} dx")


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_backward_edge_rows(op, path):
    x, dy = rnd((5, 21), 3, scale=3.0), rnd((5, 21), 4)
    x[0] = float("-inf")  # all -inf: NaN, as torch
    x[1, :9] = float("-inf")  # masked entries: no gradient there
    x[2, 3] = float("nan")  # NaN anywhere: NaN row
    x[3, 7] = 40.0  # one dominant entry
    dx = rb.rows_backward_launch(op, x, dy, config=PATHS[path])
    want = ref_grad(REFS[op], x, dy)
    assert torch.isnan(dx[0]).all() and torch.isnan(dx[2]).all()
    close(dx, want, torch.float32, f"{op} dx")


@pytest.mark.parametrize("path", list(PATHS))
def test_l2_normalize_backward_zero_and_clamped_rows(path):
    x, dy = rnd((4, 19), 5), rnd((4, 19), 6)
    x[1] = 0.0  # norm 0: dx = dy / eps
    x[2] *= 1e-5  # norm below eps: dx = dy / eps, no gradient through the norm
    dx = rb.rows_backward_launch("l2_normalize", x, dy, 1e-3, config=PATHS[path])
    want = ref_grad(lambda t: l2.l2_normalize_ref(t, 1e-3), x, dy)
    for r in range(4):  # per row: the clamped rows are 1e3 times larger
        close(dx[r], want[r], torch.float32, f"l2_normalize row {r}")


def test_row_backward_noncontiguous_input_and_broadcast_gradient():
    x = rnd((37, 5), 7).t()  # (5, 37), transposed
    dy = rnd((1, 37), 8).expand(5, 37)  # stride 0 along rows, as a broadcast gradient arrives
    for op in REFS:
        close(rb.rows_backward_launch(op, x, dy, 1e-6, config=PATHS["tile"]), ref_grad(REFS[op], x, dy),
              torch.float32, op)


def test_row_backward_refuses_unknown_ops_and_shapes():
    x = torch.randn(2, 3)
    with pytest.raises(ValueError, match="no row backward kernel"):
        rb.rows_backward_launch("tanh", x, x)
    with pytest.raises(ValueError, match="x's shape"):
        rb.rows_backward_launch("softmax", x, x[:1])


# --- max over a dimension (torch.amax's rule: ties share, NaN slices give NaN) ----------------------------------

def _ties(shape, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 4, shape, generator=g).to(dtype).to(DEV)  # few distinct values: many ties


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_backward_last_dim(keepdim, path, dtype):
    x = _ties((7, 11), 9, dtype)
    x[1, 4] = float("nan")  # a NaN row: NaN gradient over the whole row
    x[2] = float("-inf")  # all -inf: every entry ties
    x[3, 10] = 9.0  # a unique maximum in the last, partial chunk
    dy = rnd((7, 1) if keepdim else (7,), 10, dtype)
    dx = rb.max_backward_launch(x, -1, dy, config=PATHS[path])
    want = ref_grad(lambda t: mx.max_dim_ref(t, -1, keepdim), x, dy)
    assert dx.dtype == dtype and dx.shape == x.shape and torch.isnan(dx[1]).all()
    close(dx, want, dtype, "max dx")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, dim", [((3, 9, 7), 1), ((9, 5), 0), ((2, 3, 4, 5), -3)])
def test_max_backward_middle_dim(shape, dim, dtype):
    x = _ties(shape, 11, dtype)
    x.view(-1)[4] = float("nan")
    x.select(dim, 0).fill_(float("-inf"))
    dy = rnd(mx.max_dim_ref(x, dim).shape, 12, dtype)
    dx = rb.max_backward_launch(x, dim, dy, mid_config={"BLOCK_R": 2, "BLOCK_I": 4, "num_warps": 4})
    close(dx, ref_grad(lambda t: mx.max_dim_ref(t, dim), x, dy), dtype, "max dx")


def test_max_backward_zero_dim_and_bad_gradient():
    x = rnd((), 13)
    assert rb.max_backward_launch(x, 0, rnd((), 14)).shape == ()
    with pytest.raises(ValueError, match="reduced shape"):
        rb.max_backward_launch(torch.randn(3, 4), 1, torch.randn(4))


# --- cumsum: the reversed scan --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, dim", [((3, 37), -1), ((2, 19, 5), 1), ((19,), 0), ((4, 1), 1), ((), 0)])
def test_cumsum_backward_is_the_reversed_scan(shape, dim, dtype):
    dy = rnd(shape, 15, dtype)
    dx = cs.cumsum_launch(dy, dim, {"BLOCK_N": 16, "num_warps": 4}, {"BLOCK_R": 4, "BLOCK_I": 4, "num_warps": 4},
                          reverse=True)
    assert dx.dtype == dtype and dx.shape == dy.shape
    close(dx, ref_grad(lambda t: cs.cumsum_ref(t, dim), rnd(shape, 16, dtype), dy), dtype, "cumsum dx")


# --- sum and mean: dy broadcast back, no kernel ------------------------------------------------------------------

@pytest.mark.parametrize("mean", [False, True])
@pytest.mark.parametrize("shape, dim, keepdim", [((3, 5, 4), 1, False), ((3, 5, 4), -1, True), ((6,), 0, False),
                                                 ((), 0, False), ((2, 0, 3), 1, False)])
def test_sum_mean_backward_is_an_expanded_view(mean, shape, dim, keepdim):
    x = torch.randn(shape, dtype=torch.float64)
    ref = torch.mean if mean else torch.sum
    dy = torch.randn(ref(x, dim, keepdim=keepdim).shape, dtype=torch.float64)
    (dx, *rest) = rb.expand_backward(mean)([x, dim, keepdim], [dy], (True, False, False))
    assert rest == [None, None] and dx.shape == x.shape
    if x.dim() and x.shape[dim] > 1:
        assert dx.stride(dim) == 0  # a view: nothing written
    want = ref_grad(lambda t: ref(t, dim, keepdim=keepdim), x, dy)
    torch.testing.assert_close(dx, want, rtol=1e-12, atol=0)


# --- dispatch through the registry -------------------------------------------------------------------------------

OPS = {  # op -> (args after x, fp64 reference)
    "softmax": ((), sm.softmax_ref), "log_softmax": ((), ls.log_softmax_ref),
    "l2_normalize": ((1e-6,), l2.l2_normalize_ref), "cumsum": ((1,), cs.cumsum_ref),
    "max_dim": ((1, False), mx.max_dim_ref), "sum_dim": ((1, True), torch.sum), "mean_dim": ((0, False), torch.mean),
}
#: the kernel-backed fast backwards (sum and mean apply everywhere)
KERNEL_BACKWARDS = {"softmax": rb.row_fast_backward("softmax"), "log_softmax": rb.row_fast_backward("log_softmax"),
                    "l2_normalize": rb.row_fast_backward("l2_normalize"), "cumsum": cs._cumsum_backward,
                    "max_dim": rb._max_backward}


def test_every_op_has_its_own_backward():
    for name in OPS:
        assert registry.has_backward_kernels(name), name


@pytest.mark.parametrize("name", list(KERNEL_BACKWARDS))
def test_kernel_backwards_decline_off_cuda(name):
    x = torch.randn(3, 5)
    dy = torch.randn(OPS[name][1](x, *OPS[name][0]).shape)
    assert KERNEL_BACKWARDS[name]([x, *OPS[name][0]], [dy], (True,) * (1 + len(OPS[name][0]))) is None
    assert KERNEL_BACKWARDS[name]([x, *OPS[name][0]], [None], (True,) * (1 + len(OPS[name][0]))) is None


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(OPS))
def test_op_gradient_through_the_registry(name, dtype, monkeypatch):
    """The op's registered backward end to end; on a CPU-only machine the kernels' CUDA check is widened to the
    CPU so the interpreter runs them (each fast backward is spied on: it must run, not decline)."""
    if not torch.cuda.is_available():
        widened = lambda *ts: all(t.dtype in registry.KERNEL_DTYPES for t in ts)  # noqa: E731
        monkeypatch.setattr(rb, "on_kernels", widened)
        monkeypatch.setattr(cs, "on_kernels", widened)
    ran = []
    for fn in ("rows_backward_launch", "max_backward_launch"):
        real = getattr(rb, fn)
        monkeypatch.setattr(rb, fn, lambda *a, real=real, **k: ran.append(1) or real(*a, **k))
    real_cumsum = cs.cumsum_launch
    monkeypatch.setattr(cs, "cumsum_launch", lambda *a, **k: ran.append(1) or real_cumsum(*a, **k))
    args, ref = OPS[name]
    x = rnd((4, 9), 17, dtype, 2.0).requires_grad_(True)
    out = registry.call(name, x, *args)
    dy = rnd(out.shape, 18, dtype)
    out.backward(dy)
    assert x.grad.dtype == dtype and x.grad.shape == x.shape
    assert ran or name in ("sum_dim", "mean_dim")
    close(x.grad, ref_grad(lambda t: ref(t, *args), x, dy), dtype, f"{name} grad")
