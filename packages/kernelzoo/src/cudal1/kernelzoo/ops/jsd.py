"""Generalised Jensen-Shannon divergence between two distributions given as log-probabilities, per row, as
used for distillation::

    P = exp(log_p) (teacher),  Q = exp(log_q) (student),  M = beta * P + (1 - beta) * Q
    jsd[i] = beta * KL(P || M) + (1 - beta) * KL(Q || M)           summed over the last dimension

``beta`` in [0, 1]; the mixture form vanishes at both ends (M equals one of the two), so the ends are defined
as the plain divergences: ``beta == 0`` is the forward KL(P || Q), ``beta == 1`` the reverse KL(Q || P)
(this module's convention; check it against another library's before swapping one for the other).
Rows whose ``labels`` equal ``ignore_index`` count 0 and are left out of the mean.

Shapes: ``log_q``, ``log_p`` (N, V), same shape and dtype; ``labels`` (N,) int64 or None; fp32, bf16, fp16
(fp32 math); output per ``reduction``: ``none`` (N,), ``sum``, ``batchmean`` (sum / non-ignored rows).
One program per row, one pass over the row, no (N, V) temporary.

Backward (CUDA, fp32/bf16/fp16, gradient of ``log_q`` only: the student's): one elementwise pass,
``dlog_q = w_row * (1 - beta) * Q * (log_q - log M)`` for the mixture (``-P`` for beta 0, ``Q * (log_q - log_p
+ 1)`` for beta 1), ``w_row`` the reduction's weight of the row times the incoming gradient (0 for ignored rows);
the reference's vector-Jacobian product where ``log_p`` wants a gradient too, or off CUDA.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "jsd", "jsd_backward_launch", "jsd_launch", "jsd_ref"]

#: BLOCK columns per step, num_warps (untuned)
CONFIGS = {
    "sm80": {"BLOCK": 2048, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 4096, "num_warps": 8},
}
check_table(CONFIGS, "jsd")
_REDUCTIONS = ("none", "sum", "batchmean")


def _rows_ref(log_q: torch.Tensor, log_p: torch.Tensor, beta: float) -> torch.Tensor:
    lq = log_q.to(torch.promote_types(log_q.dtype, torch.float32))
    lp = log_p.to(lq.dtype)
    p, q = lp.exp(), lq.exp()
    if beta == 0.0:
        return (p * (lp - lq)).sum(-1)
    if beta == 1.0:
        return (q * (lq - lp)).sum(-1)
    log_m = torch.logaddexp(lp + torch.log(torch.tensor(beta, dtype=lq.dtype)),
                            lq + torch.log(torch.tensor(1.0 - beta, dtype=lq.dtype)))
    return (beta * p * (lp - log_m) + (1.0 - beta) * q * (lq - log_m)).sum(-1)


def jsd_ref(log_q: torch.Tensor, log_p: torch.Tensor, labels: torch.Tensor | None = None, beta: float = 0.5,
            ignore_index: int = -100, reduction: str = "batchmean") -> torch.Tensor:
    """PyTorch reference (log-space mixture: ``log M = logaddexp(log beta + log_p, log(1 - beta) + log_q)``)."""
    return _reduce(_rows_ref(log_q, log_p, beta), labels, ignore_index, reduction)


def _reduce(rows: torch.Tensor, labels: torch.Tensor | None, ignore_index: int, reduction: str) -> torch.Tensor:
    """Per-row divergences -> the loss: ignored rows count 0 and are left out of ``batchmean``'s count."""
    keep = torch.ones_like(rows, dtype=torch.bool) if labels is None else labels != ignore_index
    rows = torch.where(keep, rows, torch.zeros_like(rows))
    if reduction == "none":
        return rows
    return rows.sum() if reduction == "sum" else rows.sum() / keep.sum()


@triton.jit
def _jsd_rows_kernel(q_ptr, p_ptr, y_ptr, n_cols, beta, log_beta, log_1mb, MODE: tl.constexpr, BLOCK: tl.constexpr):
    # MODE 0: forward KL(P || Q); 1: reverse KL(Q || P); 2: the beta mixture
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        lq = tl.load(q_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        lp = tl.load(p_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        p = tl.exp(lp)
        q = tl.exp(lq)
        if MODE == 0:
            v = p * (lp - lq)
        elif MODE == 1:
            v = q * (lq - lp)
        else:
            a = lp + log_beta
            b = lq + log_1mb
            mx = tl.maximum(a, b)
            log_m = mx + tl.log(tl.exp(a - mx) + tl.exp(b - mx))
            v = beta * p * (lp - log_m) + (1.0 - beta) * q * (lq - log_m)
        acc += tl.where(mask, v, 0.0)
    tl.store(y_ptr + row, tl.sum(acc, 0))


def _check(log_q: torch.Tensor, log_p: torch.Tensor, labels: torch.Tensor | None, beta: float,
           reduction: str) -> None:
    if log_q.shape != log_p.shape or log_q.dtype != log_p.dtype or log_q.dim() != 2:
        raise ValueError(f"log_q and log_p must be (N, V) of one dtype, got {tuple(log_q.shape)} {log_q.dtype} and "
                         f"{tuple(log_p.shape)} {log_p.dtype} (flatten (B, S, V) first)")
    if labels is not None and labels.shape != (log_q.shape[0],):
        raise ValueError(f"labels must be ({log_q.shape[0]},), got {tuple(labels.shape)}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must lie in [0, 1], got {beta}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def jsd_launch(log_q: torch.Tensor, log_p: torch.Tensor, beta: float = 0.5, config: dict | None = None) -> torch.Tensor:
    """Run the Triton row kernel: the per-row divergences (N,) in fp32 (before labels and reduction)."""
    import math

    cfg = config or pick(CONFIGS, log_q.device if log_q.is_cuda else None)
    lq, lp = log_q.contiguous(), log_p.contiguous()
    n, v = lq.shape
    out = torch.empty(n, dtype=torch.float32, device=lq.device)
    if n:
        mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2
        lb = math.log(beta) if 0.0 < beta else 0.0
        l1 = math.log(1.0 - beta) if beta < 1.0 else 0.0
        _jsd_rows_kernel[(n,)](lq, lp, out, v, float(beta), lb, l1, MODE=mode,
                               BLOCK=min(cfg["BLOCK"], triton.next_power_of_2(max(v, 1))),
                               num_warps=cfg["num_warps"])
    return out


@triton.jit
def _jsd_bwd_kernel(q_ptr, p_ptr, w_ptr, dq_ptr, n_cols, log_beta, log_1mb, one_m_beta, MODE: tl.constexpr,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    lq = tl.load(q_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    lp = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + row)
    if MODE == 0:
        d = -tl.exp(lp)
    elif MODE == 1:
        d = tl.exp(lq) * (lq - lp + 1.0)
    else:
        a = lp + log_beta
        b = lq + log_1mb
        mx = tl.maximum(a, b)
        log_m = mx + tl.log(tl.exp(a - mx) + tl.exp(b - mx))
        d = one_m_beta * tl.exp(lq) * (lq - log_m)
    tl.store(dq_ptr + offs, (w * d).to(dq_ptr.dtype.element_ty), mask=mask)


def _row_weights(g: torch.Tensor, n: int, labels: torch.Tensor | None, ignore_index: int,
                 reduction: str) -> torch.Tensor:
    """d loss / d row divergence, times the incoming gradient ``g``: (n,) fp32 (no device sync)."""
    keep = torch.ones(n, dtype=torch.float32, device=g.device) if labels is None else \
        (labels != ignore_index).to(torch.float32)
    w = g.to(torch.float32) * keep
    return w / keep.sum() if reduction == "batchmean" else w


def jsd_backward_launch(log_q: torch.Tensor, log_p: torch.Tensor, row_weight: torch.Tensor, beta: float = 0.5,
                        config: dict | None = None) -> torch.Tensor:
    """``dlog_q`` (N, V), ``log_q``'s dtype, for per-row weights ``row_weight`` (N,) fp32 (see the module
    docstring)."""
    import math

    cfg = config or pick(CONFIGS, log_q.device if log_q.is_cuda else None)
    lq, lp = log_q.contiguous(), log_p.contiguous()
    n, v = lq.shape
    dq = torch.empty_like(lq)
    if lq.numel():
        mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2
        block = min(cfg["BLOCK"], triton.next_power_of_2(max(v, 1)))
        _jsd_bwd_kernel[(n, triton.cdiv(v, block))](
            lq, lp, row_weight.to(torch.float32).contiguous(), dq, v, math.log(beta) if beta > 0 else 0.0,
            math.log(1.0 - beta) if beta < 1 else 0.0, 1.0 - beta, MODE=mode, BLOCK=block,
            num_warps=cfg["num_warps"])
    return dq


def _jsd_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (log_q, log_p, labels, beta, ignore_index, reduction), (g,) = args, grads
    if g is None or needs[1] or not on_kernels(log_q):
        return None
    w = _row_weights(g, log_q.shape[0], labels, ignore_index, reduction)
    return jsd_backward_launch(log_q, log_p, w, beta) if needs[0] else None, None, None, None, None, None


@zoo_custom_op("cudal1::jsd", mutates_args=(), ref=jsd_ref, fast_backward=_jsd_backward)
def _jsd_op(log_q: torch.Tensor, log_p: torch.Tensor, labels: torch.Tensor | None, beta: float, ignore_index: int,
            reduction: str) -> torch.Tensor:
    if not log_q.is_cuda:
        return jsd_ref(log_q, log_p, labels, beta, ignore_index, reduction).clone()
    return _reduce(jsd_launch(log_q, log_p, beta), labels, ignore_index, reduction)


@_jsd_op.register_fake
def _(log_q, log_p, labels, beta, ignore_index, reduction):
    acc = torch.promote_types(log_q.dtype, torch.float32)
    return log_q.new_empty((log_q.shape[0],) if reduction == "none" else (), dtype=acc)


def jsd(log_q: torch.Tensor, log_p: torch.Tensor, labels: torch.Tensor | None = None, *, beta: float = 0.5,
        ignore_index: int = -100, reduction: str = "batchmean") -> torch.Tensor:
    """The generalised JSD of student ``log_q`` and teacher ``log_p`` (see the module docstring);
    ``torch.ops.cudal1.jsd``."""
    _check(log_q, log_p, labels, beta, reduction)
    return call("jsd", log_q, log_p, labels, float(beta), int(ignore_index), reduction)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_jsd_rows_kernel", {"q_ptr": "*bf16", "p_ptr": "*bf16", "y_ptr": "*fp32",
                                                     "n_cols": "i32", "beta": "fp32", "log_beta": "fp32",
                                                     "log_1mb": "fp32"}, constexprs={"MODE": 2}),
                  TritonKernel("_jsd_bwd_kernel", {"q_ptr": "*bf16", "p_ptr": "*bf16", "w_ptr": "*fp32",
                                                   "dq_ptr": "*bf16", "n_cols": "i32", "log_beta": "fp32",
                                                   "log_1mb": "fp32", "one_m_beta": "fp32"}, constexprs={"MODE": 2})]
