"""Backward of the pooling, depthwise-conv and matrix-product ops (avg_pool2d, avg_pool3d, max_pool2d,
bias_relu_max_pool2d, depthwise_conv2d, diag_matmul, matmul, matvec): each backward kernel per dtype on odd
shapes against the fp64 autograd of the op's PyTorch reference (Triton's interpreter on a CPU-only machine, the
GPU where there is one), max pooling's ties, NaN and -inf windows as PyTorch routes them, and each op's
dispatch: its fast backward declines CPU tensors (the reference's VJP runs), and run through the registry with
its kernels it gives the reference's gradients, only the wanted ones."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry
from cudal1.kernelzoo.ops import _pool_backward as pool_bwd
from cudal1.kernelzoo.ops import avg_pool2d as ap2
from cudal1.kernelzoo.ops import avg_pool3d as ap3
from cudal1.kernelzoo.ops import bias_relu_max_pool2d as brm
from cudal1.kernelzoo.ops import depthwise_conv2d as dw
from cudal1.kernelzoo.ops import diag_matmul as dm
from cudal1.kernelzoo.ops import matmul as mm
from cudal1.kernelzoo.ops import matvec as mv
from cudal1.kernelzoo.ops import max_pool2d as mp
from cudal1.kernelzoo.ops._pool_backward import avg_pool_backward_launch, max_pool2d_backward_launch

from .helpers import DEV, close_scaled, rnd

#: (atol, rtol) of a gradient against the fp64 reference, per dtype: fp32 math, one rounding at the store
TOL = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (5e-2, 5e-2), torch.float16: (5e-3, 5e-3)}
DTYPES = pytest.mark.parametrize("dtype", list(TOL), ids=str)
#: small tiles, so that several programs (and partial tiles) run in the interpreter
POOL_CFG = {"BLOCK_H": 8, "BLOCK_W": 8, "num_warps": 4}


def per_dtype(names: str, cases: list) -> pytest.MarkDecorator:
    """Every case in fp32, the first (the hardest) in bf16 and fp16 too: the interpreter is slow."""
    rows = [(torch.float32, c) for c in cases] + [(d, cases[0]) for d in (torch.bfloat16, torch.float16)]
    return pytest.mark.parametrize(f"dtype, {names}", [
        pytest.param(d, *c, id="-".join([str(d).removeprefix("torch."), *map(str, c)]).replace(" ", ""))
        for d, c in rows])


def grid_values(shape, seed, dtype):
    """Multiples of 0.5 in [-2, 2]: many exact ties in every dtype, sums with a grid bias exact."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-4, 5, shape, generator=g) * 0.5).to(dtype).to(DEV)


def ref_grads(fn, inputs, grads_out):
    """Gradients of ``fn`` at ``inputs`` (rounded to their dtype, then computed in fp64 on the CPU)."""
    xs = [x.detach().double().cpu().requires_grad_(True) for x in inputs]
    return torch.autograd.grad(fn(*xs), xs, grads_out.double().cpu())


def close(got, want, dtype, what):
    close_scaled(got, want, TOL[dtype], f"{what} ({dtype})", dtype=dtype)


# --- pooling -----------------------------------------------------------------------------------------------------

POOL2D = [((3, 3), (2, 2), (1, 1)),  # overlapping windows (the max_pool2d task's)
          ((2, 3), (1, 2), (1, 0)),  # stride 1 rows: up to 2 x 2 windows per element
          ((3, 2), (3, 3), (0, 1)),  # stride > kernel: gaps that get no gradient
          ((2, 2), (2, 2), (0, 0))]


@per_dtype("k, s, p, count_pad", [(*w, c) for c in (False, True) for w in POOL2D])
def test_avg_pool2d_backward_kernel(k, s, p, count_pad, dtype):
    x = rnd((1, 2, 9, 11), 1, dtype)
    want_fn = lambda t: torch.nn.functional.avg_pool2d(t, k, s, p, count_include_pad=count_pad)  # noqa: E731
    dy = rnd(want_fn(x.double().cpu()).shape, 2, dtype)
    dx = avg_pool_backward_launch(x, dy, 2, list(k), list(s), list(p), count_pad, config=POOL_CFG)
    close(dx, ref_grads(want_fn, (x,), dy)[0], dtype, "dx")


@per_dtype("k, s, p, count_pad", [(3, 2, 1, False), ((2, 3, 2), (1, 2, 2), (1, 0, 1), True)])
def test_avg_pool3d_backward_kernel(k, s, p, count_pad, dtype):
    x = rnd((2, 4, 6, 7), 3, dtype)  # (C, D, H, W): no batch dimension
    want_fn = lambda t: torch.nn.functional.avg_pool3d(t, k, s, p, count_include_pad=count_pad)  # noqa: E731
    dy = rnd(want_fn(x.double().cpu()).shape, 4, dtype)
    dx = avg_pool_backward_launch(x, dy.transpose(0, 1).contiguous().transpose(0, 1), 3, k, s, p, count_pad,
                                  config=POOL_CFG)  # a non-contiguous dy
    close(dx, ref_grads(want_fn, (x,), dy)[0], dtype, "dx")


@per_dtype("k, s, p", POOL2D)
def test_max_pool2d_backward_kernel_with_ties_nan_and_inf(k, s, p, dtype):
    x = grid_values((1, 3, 9, 11), 5, dtype)  # ties in most windows: the first maximum takes the gradient
    x[0, 0, 2, 3] = x[0, 0, 4, 4] = x[0, 2, 0, 0] = float("nan")  # the last NaN of a window takes it
    x[0, 1, :5, :5] = float("-inf")  # windows of -inf only: their first in-bounds tap takes it
    x[0, 2, 3, 5] = float("inf")
    want_fn = lambda t: torch.nn.functional.max_pool2d(t, k, s, p)  # noqa: E731
    dy = rnd(want_fn(x.double().cpu()).shape, 6, dtype)
    dx, db = max_pool2d_backward_launch(x, dy, list(k), list(s), list(p), config=POOL_CFG)
    assert db is None
    close(dx, ref_grads(want_fn, (x,), dy)[0], dtype, "dx")


@per_dtype("with_bias", [(True,), (False,)])
def test_bias_relu_max_pool2d_backward_kernel(with_bias, dtype):
    x = grid_values((2, 3, 7, 9), 7, dtype)  # odd H, W: the last row and column get no gradient
    x[0, 1, 2, 2] = float("nan")  # relu passes NaN's gradient, as PyTorch's threshold_backward
    bias = torch.tensor([0.5, -1.0, 0.0], dtype=dtype, device=DEV) if with_bias else None  # ties at 0 too
    dy = rnd((2, 3, 3, 4), 8, dtype)
    dx, db = max_pool2d_backward_launch(x, dy, 2, 2, 0, bias=bias, relu=True, need_dbias=with_bias,
                                        config=POOL_CFG)
    if with_bias:
        want = ref_grads(brm.bias_relu_max_pool2d_ref, (x, bias), dy)
        close(db, want[1], dtype, "dbias")
    else:
        want = ref_grads(brm.bias_relu_max_pool2d_ref, (x,), dy)
        assert db is None
    close(dx, want[0], dtype, "dx")
    dx_only, none = max_pool2d_backward_launch(x, dy, 2, 2, 0, bias=bias, relu=True, config=POOL_CFG)
    assert none is None and torch.equal(dx_only, dx)


def test_pool_backward_refuses_a_dy_of_the_wrong_shape():
    x = torch.randn(1, 2, 6, 6, device=DEV)
    with pytest.raises(ValueError, match="pooled shape"):
        avg_pool_backward_launch(x, torch.randn(1, 2, 2, 2, device=DEV), 2, [2, 2], [2, 2], [0, 0])
    with pytest.raises(ValueError, match="takes a bias"):
        max_pool2d_backward_launch(x, torch.randn(1, 2, 3, 3, device=DEV), 2, 2, 0, need_dbias=True)


# --- depthwise conv, diag matmul ---------------------------------------------------------------------------------

@per_dtype("k, stride, padding", [((3, 5), 2, 2), ((3, 3), 1, 1), ((2, 2), 3, 0)])
def test_depthwise_conv2d_backward_kernels(k, stride, padding, dtype):
    x, w, b = rnd((1, 2, 9, 11), 9, dtype), rnd((2, 1, *k), 10, dtype), rnd((2,), 11, dtype)
    dy = rnd(dw.depthwise_conv2d_ref(x.double().cpu(), w.double().cpu(), None, stride, padding).shape, 12, dtype)
    cfg = {"BLOCK_H": 4, "BLOCK_W": 8, "num_warps": 4}
    dx, dwt, db = dw.depthwise_conv2d_backward_launch(x, w, dy, stride, padding, need_dbias=True, config=cfg)
    want = ref_grads(lambda x, w, b: dw.depthwise_conv2d_ref(x, w, b, stride, padding), (x, w, b), dy)
    close(dx, want[0], dtype, "dx")
    close(dwt, want[1], dtype, "dweight")
    close(db, want[2], dtype, "dbias")
    none, none_w, db_only = dw.depthwise_conv2d_backward_launch(x, w, dy, stride, padding, need_dx=False,
                                                                need_dweight=False, need_dbias=True, config=cfg)
    assert none is None and none_w is None
    close(db_only, want[2], dtype, "dbias alone")


@DTYPES
@pytest.mark.parametrize("cols, block", [(37, 16), (100, 8), (5, 64)])
def test_diag_matmul_backward_kernel(cols, block, dtype, monkeypatch):
    monkeypatch.setattr(dm, "MAX_COL_PROGRAMS", 4)  # 100 / 8: 4 programs per row, each striding over blocks
    a, b, dy = rnd((5,), 13, dtype), rnd((5, cols), 14, dtype), rnd((5, cols), 15, dtype)
    cfg = {"BLOCK": block, "num_warps": 4}
    da, db = dm.diag_matmul_backward_launch(a, b, dy, config=cfg)
    want = ref_grads(dm.diag_matmul_ref, (a, b), dy)
    close(da, want[0], dtype, "da")
    close(db, want[1], dtype, "db")
    assert dm.diag_matmul_backward_launch(a, b, dy, need_db=False, config=cfg)[1] is None
    assert dm.diag_matmul_backward_launch(a, b, dy, need_da=False, config=cfg)[0] is None


# --- each op's dispatch: kernels where they apply, the reference's VJP elsewhere --------------------------------

def _on_cpu_kernels(*tensors):
    """``registry.on_kernels`` that also takes CPU tensors: the fast backward runs in Triton's interpreter."""
    return all(t.dtype in registry.KERNEL_DTYPES for t in tensors)


def r(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


#: op -> (module whose on_kernels the fast backward reads, fast backward, arguments as the registry passes them, float tensors first)
DISPATCH = {
    "avg_pool2d": (pool_bwd, ap2._avg_pool2d_backward, lambda: [r(1, 2, 7, 6), [3, 3], [2, 2], [1, 1], False]),
    "avg_pool3d": (pool_bwd, ap3._avg_pool3d_backward, lambda: [r(1, 2, 5, 4, 6), [2, 2, 2], [2, 1, 2], [1, 0, 1], True]),
    "max_pool2d": (mp, mp._max_pool2d_backward, lambda: [r(1, 2, 7, 6), [3, 3], [2, 2], [1, 1]]),
    "bias_relu_max_pool2d": (brm, brm._bias_relu_max_pool2d_backward, lambda: [r(2, 3, 5, 4), r(3, seed=1)]),
    "depthwise_conv2d": (dw, dw._depthwise_conv2d_backward, lambda: [r(2, 3, 6, 7), r(3, 1, 3, 3, seed=1),
                                                                      r(3, seed=2), 2, 1]),
    "diag_matmul": (dm, dm._diag_matmul_backward, lambda: [r(5), r(5, 7, seed=1)]),
    "matmul": (mm, mm._matmul_backward, lambda: [r(3, 4, 5), r(5, 6, seed=1)]),  # a 2-D b shared by the batch
    "matvec": (mv, mv._matvec_backward, lambda: [r(4, 5), r(5, 1, seed=1)]),
}


def _tensors(args):
    return [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]


def test_every_op_here_has_backward_kernels():
    for name in DISPATCH:
        assert registry.has_backward_kernels(name), name


@pytest.mark.parametrize("name", sorted(DISPATCH))
def test_fast_backward_declines_cpu_and_float64(name):
    _, fast, make = DISPATCH[name]
    args = make()
    out = registry.reference(name)(*args)
    needs = tuple(isinstance(a, torch.Tensor) for a in args)
    assert fast(args, [torch.ones_like(out)], needs) is None
    args64 = [a.double() if isinstance(a, torch.Tensor) else a for a in args]
    assert fast(args64, [torch.ones_like(out).double()], needs) is None


@pytest.mark.parametrize("name", sorted(DISPATCH))
def test_op_gradients_through_its_backward_kernels(name, monkeypatch):
    """The registered op, run through the registry with its fast backward (kernels in the interpreter on the
    CPU): every input's gradient as the reference's autograd; the fast backward gives None for inputs nobody
    wants a gradient of and for an output without one."""
    module, fast, make = DISPATCH[name]
    monkeypatch.setattr(module, "on_kernels", _on_cpu_kernels)
    args = [a.to(DEV) if isinstance(a, torch.Tensor) else a for a in make()]
    wrt = _tensors(args)
    got_in = [a.detach().requires_grad_(True) if i in wrt else a for i, a in enumerate(args)]
    want_in = [a.detach().double().cpu().requires_grad_(True) if i in wrt else a for i, a in enumerate(args)]
    out = registry.call(name, *got_in)
    want_out = registry.reference(name)(*want_in)
    dy = r(*out.shape, seed=9).to(DEV)
    got = torch.autograd.grad(out, [got_in[i] for i in wrt], dy)
    want = torch.autograd.grad(want_out, [want_in[i] for i in wrt], dy.double().cpu())
    for i, g, w in zip(wrt, got, want, strict=True):
        close(g, w, torch.float32, f"{name} gradient of argument {i}")

    needs = [False] * len(args)
    needs[wrt[-1]] = True  # only the last tensor's gradient wanted
    only = fast([a.detach() if isinstance(a, torch.Tensor) else a for a in args], [dy], tuple(needs))
    assert len(only) == len(args) and all(g is None for i, g in enumerate(only) if i != wrt[-1])
    close(only[wrt[-1]], want[-1], torch.float32, f"{name} gradient of argument {wrt[-1]} alone")
    assert all(g is None for g in fast(args, [None], tuple(i in wrt for i in range(len(args)))))
