"""Autograd of the ops that compute their input gradients during the forward (fused linear cross-entropy, the
fused mean/sum cross-entropy), written once.

Such an op's implementation takes ``with_grad`` as its last argument and returns ``(loss, *buffers)``, buffer
``j`` being the gradient of argument ``grad_of[j]`` for a unit loss gradient (an empty tensor where that argument
is None or ``with_grad`` is False). The buffers are the op's own: held on ``ctx`` (not saved tensors) and handed
to autograd in the backward as the gradients themselves, so nothing is copied (a saved tensor still referenced
would make autograd clone it: +1 GB at the peak for a 128k x 4096 head's grad_W). They are marked
non-differentiable (no reference cycle through ``ctx``) and their absent gradients are not materialised as
zeros. The backward scales them by the incoming gradient in place, and not at all when it is exactly 1 (the
usual ``loss.backward()``; checking costs one device sync). A second backward of the same graph
(``retain_graph``) recomputes them from the saved inputs: the first handed them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = ["forward_gradients"]

_SAVED = object()  # a tensor argument's place in the layout (the tensor itself is a saved tensor)


def forward_gradients(name: str, impl: Callable[..., Sequence[torch.Tensor]], grad_of: tuple[int, ...],
                      ) -> tuple[Callable[..., None], Callable[..., tuple]]:
    """``(setup_context, backward)`` for op ``name`` whose implementation ``impl`` returns the loss and the
    gradient buffers of its arguments ``grad_of`` (see the module docstring)."""

    def setup_context(ctx: Any, inputs: Sequence[Any], output: Sequence[torch.Tensor]) -> None:
        buffers = tuple(output[1:])
        ctx.mark_non_differentiable(*buffers)
        ctx.set_materialize_grads(False)
        ctx.buffers = buffers
        ctx.save_for_backward(*(t for t in inputs if isinstance(t, torch.Tensor)))  # to recompute, if asked
        ctx.layout = [_SAVED if isinstance(t, torch.Tensor) else t for t in inputs]
        ctx.dtypes = [None if inputs[i] is None else inputs[i].dtype for i in grad_of]
        ctx.with_grad = inputs[-1]

    def backward(ctx: Any, g_loss: torch.Tensor | None, *_unused: Any) -> tuple:
        if not ctx.with_grad:
            raise RuntimeError(f"{name} was run without its gradients (with_grad=False) but is being "
                               f"differentiated: call it through its public function in cudal1.kernelzoo")
        grads: list[Any] = [None] * len(ctx.layout)
        if g_loss is None:
            return tuple(grads)
        if ctx.buffers is None:  # a second backward: the first handed the buffers out; recompute them
            saved = iter(ctx.saved_tensors)
            args = [next(saved) if v is _SAVED else v for v in ctx.layout]
            with torch.no_grad():
                ctx.buffers = tuple(impl(*args)[1:])
        buffers, ctx.buffers = ctx.buffers, None
        unit = bool(g_loss == 1)
        for i, buf, dtype in zip(grad_of, buffers, ctx.dtypes, strict=True):
            if dtype is None:
                continue
            if not unit:
                buf.mul_(g_loss.to(buf.dtype))
            grads[i] = buf.to(dtype)
        return tuple(grads)

    return setup_context, backward
