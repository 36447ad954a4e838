"""Registration of the zoo's ops as ``torch.library`` custom ops, their gradients, and their eager fast path.

Every op is a custom op ``torch.ops.cudal1.<name>`` (with a fake implementation), so ``torch.compile``
traces through it. Dispatching a custom op costs host time per call (``torch.ops.cudal1.relu`` costs more host
time than its launcher alone; benchmarks/scripts/launch_overhead.py,
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md), which shows in a short op timed from the host,
and its autograd wrapper adds more each way. So the public functions call the op's implementation directly in eager
mode when no gradient is wanted, an ``autograd.Function`` carrying the op's registered ``setup_context`` and
backward when an input requires grad, and the registered op while ``torch.compile`` traces (:func:`call`).
All three run the same implementation and the same gradient; only the dispatch differs.

Gradients. Each op declares one of:

* ``ref=<the PyTorch reference>`` (same positional parameters as the op): the op is differentiable and its
  backward, registered with ``torch.library.register_autograd`` (so eager, ``torch.compile`` and the CPU
  fallback share it), is the reference's vector-Jacobian product, recomputed from the saved inputs
  (activation recomputation: the forward kernel stays fast, the backward costs the reference's forward and
  backward). An op module with backward kernels of its own passes them as ``fast_backward=`` beside ``ref=``
  (:func:`kernel_backward`): they run where they apply (CUDA, the dtypes and shapes they take) and the
  reference's VJP everywhere else; or it registers a backward outright (``backward=``, ``setup_context=``).
* ``differentiable=False``: the op has no gradient (integer outputs, ops writing into ``out``); calling it with
  an input that requires grad while grad mode is on raises :class:`NoGradientError` naming the way out,
  instead of returning a result that silently cuts the graph.

Dtypes (:func:`call`, before any kernel runs): a tensor that is not floating point is refused with a
``TypeError`` unless its parameter is an index (:data:`INDEX_PARAMS`: token ids, class targets, +-1 labels),
where a GPU kernel would read it as floats and return zeros or truncated values. float64 on CUDA runs the
op's reference (exact; the kernels compute in fp32), never a silent fp32 computation.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

__all__ = ["INDEX_PARAMS", "KERNEL_DTYPES", "NoGradientError", "call", "differentiable_ops", "has_backward_kernels",
           "kernel_backward", "on_kernels", "reference", "zoo_custom_op"]

_EAGER: dict[str, Callable[..., Any]] = {}
_NO_GRAD: set[str] = set()
_REF: dict[str, Callable[..., Any]] = {}
_PARAMS: dict[str, tuple[str, ...]] = {}
_FP64_NATIVE: set[str] = set()
_FAST_BWD: set[str] = set()
_AUTOGRAD: dict[str, type[torch.autograd.Function]] = {}

#: the dtypes the zoo's Triton kernels take (fp32 math inside, one rounding at the store)
KERNEL_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def on_kernels(*tensors: torch.Tensor) -> bool:
    """Whether the zoo's kernels apply to ``tensors``: each on CUDA in one of :data:`KERNEL_DTYPES` (else an op
    runs, or differentiates through, its PyTorch reference)."""
    return all(t.is_cuda and t.dtype in KERNEL_DTYPES for t in tensors)


#: parameters that take integer tensors; every other tensor argument of a zoo op must be floating point
INDEX_PARAMS = frozenset({"ids", "targets", "y", "position_ids", "labels"})


class NoGradientError(RuntimeError):
    """A zoo op without a gradient was called on an input that requires grad."""


def zoo_custom_op(qualname: str, *, mutates_args: Iterable[str] | str, ref: Callable[..., Any] | None = None,
                  differentiable: bool = True, backward: Callable[..., Any] | None = None,
                  setup_context: Callable[..., Any] | None = None, fast_backward: Callable[..., Any] | None = None,
                  fp64_native: bool = False, **kwargs: Any) -> Callable:
    """``torch.library.custom_op(qualname, mutates_args=...)`` that also remembers the plain function for
    :func:`call`'s eager path and registers the op's gradient (see the module docstring). ``qualname`` must
    be ``cudal1::<name>``. ``ref``: the reference whose vector-Jacobian product is the backward (needed when
    ``differentiable``, unless ``backward`` and ``setup_context`` are given); ``differentiable=False``: no
    gradient (required for ops that mutate an argument); ``fast_backward``: the op's backward kernels, used
    where they apply, with ``ref``'s VJP elsewhere (:func:`kernel_backward`); ``fp64_native``: the op computes with PyTorch ops in
    its inputs' dtype, so float64 on CUDA needs no detour through the reference."""
    ns, _, name = qualname.partition("::")
    if ns != "cudal1" or not name:
        raise ValueError(f"zoo ops live in the cudal1 namespace: got {qualname!r}")
    mutates = () if mutates_args == () else mutates_args
    if differentiable and mutates:
        raise ValueError(f"{qualname} writes into {mutates_args}: declare it differentiable=False")
    if fast_backward is not None and ref is None:
        raise ValueError(f"{qualname}: fast_backward= needs ref= (the fallback where its kernels do not apply)")
    if differentiable and ref is None and (backward is None or setup_context is None):
        raise ValueError(f"{qualname}: a differentiable op needs ref= (its PyTorch reference) or its own "
                         "backward= and setup_context=; an op without a gradient declares differentiable=False")

    def deco(fn: Callable[..., Any]) -> Any:
        op = torch.library.custom_op(qualname, mutates_args=mutates_args, **kwargs)(fn)
        _EAGER[name] = fn
        _PARAMS[name] = tuple(inspect.signature(fn).parameters)
        if fp64_native:
            _FP64_NATIVE.add(name)
        if ref is not None:
            _REF[name] = ref
        if not differentiable:
            _NO_GRAD.add(name)
        else:
            if backward is not None and setup_context is not None:
                save, bwd = setup_context, backward
                _FAST_BWD.add(name)
            elif fast_backward is not None:
                save, bwd = kernel_backward(ref, fast_backward)
                _FAST_BWD.add(name)
            else:
                save, bwd = reference_backward(ref)
            op.register_autograd(bwd, setup_context=save)
            _AUTOGRAD[name] = _eager_function(name, fn, save, bwd)
        return op

    return deco


def _eager_function(name: str, impl: Callable[..., Any], setup_context: Callable[..., None],
                    backward: Callable[..., Any]) -> type[torch.autograd.Function]:
    """The eager-mode carrier of op ``name``'s gradient: an ``autograd.Function`` running the op's implementation,
    then the *same* ``setup_context`` and ``backward`` that are registered with ``register_autograd`` (one
    gradient definition). Its dispatch costs a fraction of the custom op's autograd wrapper (whose host time each
    way for ``torch.ops.cudal1.rms_norm`` was more than the kernels themselves took;
    benchmarks/results/2026-11-25-zoo-vs-liger-h100)."""

    def forward(ctx: Any, *args: Any) -> Any:
        out = impl(*args)
        setup_context(ctx, args, out)
        return out

    def bwd(ctx: Any, *grads: Any) -> Any:
        return backward(ctx, *grads)

    return type(f"ZooOp_{name}", (torch.autograd.Function,), {"forward": staticmethod(forward),
                                                               "backward": staticmethod(bwd)})


_SAVED = object()  # marks a tensor argument's place (saved for backward) in a layout of arguments


def reference_backward(ref: Callable[..., Any]) -> tuple[Callable[..., None], Callable[..., tuple]]:
    """(setup_context, backward) computing the gradient of an op as the vector-Jacobian product of ``ref``,
    the op's PyTorch reference taking the same positional arguments (one tensor or a tuple of tensors out, as
    the op), recomputed from the saved inputs.
    Floating-point tensor inputs get gradients; other inputs (integer ids, sizes, flags) get None."""

    def setup_context(ctx: Any, inputs: Sequence[Any], output: Any) -> None:
        ctx.set_materialize_grads(False)  # an output without a gradient gets None, not a tensor of zeros
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.layout = [_SAVED if isinstance(x, torch.Tensor) else x for x in inputs]

    def backward(ctx: Any, *grads_out: torch.Tensor | None) -> tuple:
        saved = iter(ctx.saved_tensors)
        args: list[Any] = []
        wrt: list[int] = []
        for i, x in enumerate(ctx.layout):
            if x is not _SAVED or i >= len(ctx.needs_input_grad):
                args.append(x)
                continue
            t = next(saved)
            if ctx.needs_input_grad[i] and t.is_floating_point():
                t = t.detach().requires_grad_(True)
                wrt.append(i)
            args.append(t)
        grads: list[Any] = [None] * len(ctx.layout)
        if wrt:
            with torch.enable_grad():
                out = ref(*args)
                outs = out if isinstance(out, (tuple, list)) else (out,)
                pairs = [(o, g) for o, g in zip(outs, grads_out, strict=True) if g is not None and o.requires_grad]
                got = torch.autograd.grad([o for o, _ in pairs], [args[i] for i in wrt], [g for _, g in pairs],
                                          allow_unused=True) if pairs else [None] * len(wrt)
            for i, g in zip(wrt, got, strict=True):
                grads[i] = g if g is not None else torch.zeros_like(args[i])
        return tuple(grads)

    return setup_context, backward


def kernel_backward(ref: Callable[..., Any], fast: Callable[..., Any]
                    ) -> tuple[Callable[..., None], Callable[..., tuple]]:
    """(setup_context, backward) of an op with backward kernels of its own: ``fast(args, grads_out,
    needs_input_grad)`` gets the op's positional arguments as saved (tensors detached), the output gradients
    (None for an output that got none) and which inputs want a gradient; it returns one gradient (or None) per
    argument, or None where its kernels do not apply (CPU, float64, a shape or a wanted gradient they do not
    compute): then the reference's vector-Jacobian product runs instead (:func:`reference_backward`)."""
    setup_context, ref_backward = reference_backward(ref)

    def backward(ctx: Any, *grads_out: torch.Tensor | None) -> tuple:
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if x is _SAVED else x for x in ctx.layout]
        got = fast(args, list(grads_out), tuple(ctx.needs_input_grad))
        if got is None:
            return ref_backward(ctx, *grads_out)
        if len(got) != len(ctx.layout):
            raise RuntimeError(f"a fast backward returned {len(got)} gradients for {len(ctx.layout)} arguments")
        return tuple(got)

    return setup_context, backward


_Tensor = torch.Tensor
_FP64 = torch.float64


def _inspect(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[bool, bool]:
    """One pass over op ``name``'s arguments (on every eager call, so kept lean): whether an input requires grad
    (in grad mode), and whether a float64 tensor is on CUDA. Raises TypeError for a non-floating tensor outside
    :data:`INDEX_PARAMS`, ValueError for tensors on different devices (a kernel would read a host pointer as a
    device one)."""
    grad_mode = torch.is_grad_enabled()
    wants_grad = fp64_cuda = False
    device = first = None
    params = _PARAMS[name]
    items = enumerate(args) if not kwargs else enumerate((*args, *kwargs.values()))
    names = params if not kwargs else (*params[:len(args)], *kwargs)
    for i, x in items:
        if not isinstance(x, _Tensor):
            continue
        if device is None:
            device, first = x.device, i
        elif x.device != device:
            raise ValueError(f"cudal1 op {name}: {names[first]} is on {device} but {names[i]} on {x.device}; "
                             "move them to one device first")
        if x.is_floating_point():
            if x.dtype == _FP64 and x.is_cuda:
                fp64_cuda = True
        elif names[i] not in INDEX_PARAMS:
            raise TypeError(f"cudal1 op {name}: {names[i]} is a {x.dtype} tensor; it takes floating-point tensors "
                            f"(float32, bfloat16, float16, float64): convert it first, e.g. {names[i]}.float()")
        if grad_mode and x.requires_grad:
            wants_grad = True
    return wants_grad, fp64_cuda and name not in _FP64_NATIVE


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run zoo op ``name``: the registered ``torch.ops.cudal1.<name>`` while ``torch.compile`` traces, an
    ``autograd.Function`` with the op's registered gradient when an input requires grad, its implementation
    directly otherwise. Raises
    :class:`NoGradientError` for an op without a gradient called on an input that requires grad, TypeError for
    a non-floating tensor where the op takes floats, ValueError for tensors on different devices."""
    wants_grad, fp64_cuda = _inspect(name, args, kwargs)
    if fp64_cuda:
        if name not in _REF:
            raise TypeError(f"cudal1 op {name} has no float64 path on CUDA (its kernels compute in float32): use "
                            "float32, or the functional form of the op")
        return _REF[name](*args, **kwargs)
    if wants_grad and name in _NO_GRAD:
        raise NoGradientError(
            f"cudal1 op {name} has no gradient, but an input requires grad: call it under torch.no_grad(), or "
            f"pass .detach()ed inputs if no gradient should flow through it")
    if torch.compiler.is_compiling():
        return getattr(torch.ops.cudal1, name)(*args, **kwargs)
    if wants_grad:
        if kwargs or len(args) != len(_PARAMS[name]):  # the Function takes every argument, positionally
            return getattr(torch.ops.cudal1, name)(*args, **kwargs)
        return _AUTOGRAD[name].apply(*args)
    return _EAGER[name](*args, **kwargs)


def reference(name: str) -> Callable[..., Any]:
    """The PyTorch reference op ``name`` was registered with (KeyError when it has none)."""
    return _REF[name]


def has_backward_kernels(name: str) -> bool:
    """Whether op ``name`` has backward kernels of its own (else its gradient is its reference's VJP)."""
    return name in _FAST_BWD


def differentiable_ops() -> list[str]:
    """Names of the registered ops that have a gradient."""
    return sorted(set(_EAGER) - _NO_GRAD)
