"""Fused linear + cross-entropy: the loss of ``F.cross_entropy(x @ weight.T + bias, targets)`` without ever
holding the (N, V) logits, for LLM heads whose vocabulary makes the logits the largest tensor of a step.

Shapes: ``x`` (N, H) (flatten (B, S, H) first), ``weight`` (V, H), ``bias`` (V,) or None, ``targets`` (N,)
int64 in [0, V) or ``ignore_index``; fp32, bf16, fp16 or fp64 (all floating inputs one dtype; softmax
statistics in fp32, fp64 for fp64 inputs); output: a 0-d loss in that statistics dtype (``reduction`` ``mean`` over non-ignored rows, or ``sum``). Options as
``F.cross_entropy``: ``ignore_index``, ``label_smoothing`` (eps: the target gets 1 - eps, every class eps / V).

How: rows are processed in chunks of ``chunk_rows`` (default: as many rows as keep one chunk's logits no larger
than ``x`` itself, N * H elements, so peak memory does not grow with V). Per chunk: logits = x_c @ W.T (+ b)
in the input dtype, upcast to fp32, log-sum-exp, loss, and, when a gradient is wanted, dlogits = softmax -
(1 - eps) * onehot - eps / V, from which grad_x_c = dlogits @ W and grad_W += dlogits.T @ x_c,
grad_b += sum(dlogits) are accumulated in the forward pass (the logits chunk is then freed). The backward
only scales these by the incoming gradient. Registered as ``torch.ops.cudal1.fused_linear_cross_entropy``
(returning the loss and the three gradient buffers; the public function returns the loss) with its backward
through ``torch.library.register_autograd``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..registry import call, zoo_custom_op
from ._index import check_index_range

__all__ = ["fused_linear_cross_entropy", "fused_linear_cross_entropy_ref"]

_REDUCTIONS = ("mean", "sum")


def fused_linear_cross_entropy_ref(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                                   bias: torch.Tensor | None = None, ignore_index: int = -100,
                                   label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """PyTorch reference: the full logits, upcast to fp32, then ``F.cross_entropy``."""
    logits = F.linear(x, weight, bias)
    logits = logits.to(_acc(logits.dtype))
    return F.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing,
                           reduction=reduction)


def _acc(dtype: torch.dtype) -> torch.dtype:
    """The dtype the statistics are computed in: fp32, or fp64 for fp64 inputs (never below the input's)."""
    return torch.promote_types(dtype, torch.float32)


def default_chunk_rows(n: int, h: int, v: int) -> int:
    """Rows per chunk: one chunk's logits (rows x V) at most N x H elements (the size of ``x``), at least 1."""
    return max(1, min(n, (n * h) // max(v, 1)))


def _check(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
           ignore_index: int, label_smoothing: float, reduction: str) -> None:
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[1]:
        raise ValueError(f"x must be (N, H) and weight (V, H): got {tuple(x.shape)} and {tuple(weight.shape)} "
                         "(flatten (B, S, H) inputs with x.flatten(0, -2) and targets.flatten())")
    if targets.shape != (x.shape[0],):
        raise ValueError(f"targets must be ({x.shape[0]},) to match x's rows, got {tuple(targets.shape)}")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"bias must be ({weight.shape[0]},), got {tuple(bias.shape)}")
    dtypes = {t.dtype for t in (x, weight, bias) if t is not None}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise TypeError(f"x, weight and bias must share one floating dtype, got {sorted(map(str, dtypes))}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r} (per-row losses: use "
                         "cross_entropy_loss on the logits; the fused form accumulates gradients over rows)")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must lie in [0, 1], got {label_smoothing}")
    check_index_range("fused_linear_cross_entropy", "targets", targets, weight.shape[0], ignore_index)


def _setup(ctx, inputs, output) -> None:
    x, weight, _targets, bias, *_ = inputs
    _loss, gx, gw, gb = output
    ctx.save_for_backward(gx, gw, gb)
    ctx.dtypes = (x.dtype, weight.dtype, None if bias is None else bias.dtype)
    ctx.with_grad = inputs[-1]


def _backward(ctx, g_loss, *_unused):
    if not ctx.with_grad:
        raise RuntimeError("fused_linear_cross_entropy was run without gradients (with_grad=False) but is being "
                           "differentiated: call it through cudal1.kernelzoo.fused_linear_cross_entropy")
    gx, gw, gb = ctx.saved_tensors
    xd, wd, bd = ctx.dtypes
    grads = [(gx * g_loss).to(xd), (gw * g_loss).to(wd), None, (gb * g_loss).to(bd) if bd is not None else None]
    return (*grads, None, None, None, None, None)


@zoo_custom_op("cudal1::fused_linear_cross_entropy", mutates_args=(), backward=_backward, setup_context=_setup,
               fp64_native=True)
def _flce_op(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
             ignore_index: int, label_smoothing: float, reduction: str, chunk_rows: int, with_grad: bool,
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    n, v = x.shape[0], weight.shape[0]
    acc = _acc(x.dtype)
    loss = torch.zeros((), dtype=acc, device=x.device)
    gx = torch.empty_like(x) if with_grad else x.new_empty(0)
    gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if with_grad else x.new_empty(0)
    gb = torch.zeros(v, dtype=acc, device=x.device) if with_grad and bias is not None else x.new_empty(0)
    valid = targets != ignore_index
    count = int(valid.sum()) if reduction == "mean" else 1
    scale = 1.0 / count if count else math.nan
    eps = float(label_smoothing)
    for start in range(0, n, chunk_rows):
        xc = x[start:start + chunk_rows]
        tc, ok = targets[start:start + chunk_rows], valid[start:start + chunk_rows]
        z = F.linear(xc, weight, bias).to(acc)
        lse = torch.logsumexp(z, dim=-1)
        safe_t = torch.where(ok, tc, torch.zeros_like(tc))
        z_t = z.gather(1, safe_t[:, None]).squeeze(1)
        row = (1.0 - eps) * (lse - z_t)
        if eps:
            row = row + eps * (lse - z.mean(dim=-1))
        loss += torch.where(ok, row, torch.zeros_like(row)).sum()
        if with_grad:
            d = torch.softmax(z, dim=-1)  # dlogits, in place of the chunk's logits
            del z
            d.scatter_add_(1, safe_t[:, None], torch.full_like(d[:, :1], -(1.0 - eps)))
            if eps:
                d.sub_(eps / v)
            d.mul_((ok.to(d.dtype) * scale)[:, None])
            gx[start:start + chunk_rows] = (d.to(weight.dtype) @ weight).to(x.dtype)
            gw += d.t() @ xc.to(acc)
            if bias is not None:
                gb += d.sum(0)
    return loss * scale, gx, gw, gb


@_flce_op.register_fake
def _(x, weight, targets, bias, ignore_index, label_smoothing, reduction, chunk_rows, with_grad):
    acc = _acc(x.dtype)
    loss = x.new_empty((), dtype=acc)
    gx = torch.empty_like(x) if with_grad else x.new_empty(0)
    gw = x.new_empty(weight.shape, dtype=acc) if with_grad else x.new_empty(0)
    gb = x.new_empty(weight.shape[0], dtype=acc) if with_grad and bias is not None else x.new_empty(0)
    return loss, gx, gw, gb


def fused_linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                               bias: torch.Tensor | None = None, *, ignore_index: int = -100,
                               label_smoothing: float = 0.0, reduction: str = "mean",
                               chunk_rows: int | None = None) -> torch.Tensor:
    """Cross-entropy of ``x @ weight.T + bias`` against ``targets`` without materialising the logits (see the
    module docstring for shapes, dtypes and options); ``torch.ops.cudal1.fused_linear_cross_entropy``."""
    _check(x, weight, targets, bias, ignore_index, label_smoothing, reduction)
    rows = chunk_rows if chunk_rows is not None else default_chunk_rows(x.shape[0], x.shape[1], weight.shape[0])
    if rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {rows}")
    with_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias))
    return call("fused_linear_cross_entropy", x, weight, targets, bias, int(ignore_index), float(label_smoothing),
                reduction, int(rows), with_grad)[0]
