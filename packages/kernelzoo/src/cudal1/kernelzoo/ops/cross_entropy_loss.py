"""Per-sample cross-entropy of logits against class indices:
``out[i] = logsumexp_j logits[i, j] - logits[i, targets[i]]`` (0 where ``targets[i] == ignore_index``), i.e.
``F.cross_entropy(logits, targets, reduction="none")`` (no class weights, no label smoothing).

Shapes: ``logits`` (N, C) float32 (fp32 math); ``targets`` (N,) int64 or int32 in [0, C) or ``ignore_index``;
output (N,) float32. A target outside [0, C) that is not ``ignore_index`` is a ValueError (checked before
the kernel runs: one reduction and a device sync). One program per row, one pass: an online logsumexp (block max, one exp per element) plus
one gathered logit; reads N * C elements once, writes N values (eager: log_softmax writes and nll re-reads
a full (N, C) temporary, three times the traffic).

Backward (``cross_entropy_loss_backward_launch``, CUDA, fp32/bf16/fp16): one program per row recomputes the
logsumexp (one read) and writes ``dlogits = g * (softmax - onehot(target))`` (a second read, one write); rows
whose target is ``ignore_index`` get zeros. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._index import check_index_range
from ._loss_rows import CONFIGS, config_for, row_block
from ._online_lse import row_lse_parts
from .cross_entropy_fused import cross_entropy_fused

__all__ = ["CONFIGS", "cross_entropy", "cross_entropy_loss", "cross_entropy_loss_backward_launch",
           "cross_entropy_loss_launch", "cross_entropy_loss_ref"]


def cross_entropy_loss_ref(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    """PyTorch reference (the built-in task's expression)."""
    return torch.nn.functional.cross_entropy(logits, targets, ignore_index=ignore_index, reduction="none")


@triton.jit
def _cross_entropy_loss_kernel(x_ptr, t_ptr, out_ptr, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), 0)  # running max (scalar)
    s = tl.zeros([BLOCK], tl.float32)  # per-lane sum of exp(x - m)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"),
                    eviction_policy="evict_first").to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # all -inf so far: exp(-inf - 0) = 0, no NaN
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    lse = m + tl.log(tl.sum(s, 0))
    t = tl.load(t_ptr + row).to(tl.int64)
    valid = (t >= 0) & (t < n_cols)
    x_t = tl.load(x_ptr + base + tl.where(valid, t, 0), mask=valid, other=float("nan")).to(tl.float32)
    loss = tl.where(t == ignore_index, 0.0, lse - x_t)
    tl.store(out_ptr + row, loss.to(out_ptr.dtype.element_ty))


def _check(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> None:
    if logits.dim() != 2 or not logits.dtype.is_floating_point:
        raise ValueError(f"cross_entropy_loss: logits must be a floating (N, C) tensor, got {logits.dtype} "
                         f"{tuple(logits.shape)}")
    if targets.shape != logits.shape[:1] or targets.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"cross_entropy_loss: targets must be int64/int32 class indices of shape "
                         f"({logits.shape[0]},), got {targets.dtype} {tuple(targets.shape)}")
    if targets.device != logits.device:
        raise ValueError(f"cross_entropy_loss: logits on {logits.device}, targets on {targets.device}")
    check_index_range("cross_entropy_loss", "targets", targets, logits.shape[1], ignore_index)


def cross_entropy_loss_launch(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                              config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``logits`` (N, C) and ``targets`` (N,); returns (N,)."""
    _check(logits, targets, ignore_index)
    cfg = config_for(logits, config)
    x, t = logits.contiguous(), targets.contiguous()
    out = torch.empty(x.shape[:1], dtype=x.dtype, device=x.device)
    n_cols = x.shape[1]
    if out.numel():
        _cross_entropy_loss_kernel[(out.numel(),)](x, t, out, n_cols, ignore_index, BLOCK=row_block(cfg, n_cols),
                                                   num_warps=cfg["num_warps"])
    return out


@triton.jit
def _cross_entropy_bwd_kernel(x_ptr, t_ptr, g_ptr, dx_ptr, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    t = tl.load(t_ptr + row).to(tl.int64)
    g = tl.load(g_ptr + row).to(tl.float32)
    if t == ignore_index:
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            tl.store(dx_ptr + base + cols, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty),
                     mask=cols < n_cols)
    else:
        m, s, _ = row_lse_parts(x_ptr, base, n_cols, False, BLOCK)
        lse = m + tl.log(s)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            d = tl.exp(x - lse) - tl.where(cols == t, 1.0, 0.0)
            tl.store(dx_ptr + base + cols, (g * d).to(dx_ptr.dtype.element_ty), mask=mask)


def cross_entropy_loss_backward_launch(logits: torch.Tensor, targets: torch.Tensor, grad: torch.Tensor,
                                       ignore_index: int = -100, config: dict | None = None) -> torch.Tensor:
    """``dlogits`` (N, C), ``logits``' dtype, of the per-sample losses for their gradient ``grad`` (N,); the
    targets were range-checked by the forward (no check, no device sync here)."""
    if grad.shape != logits.shape[:1]:
        raise ValueError(f"grad must have shape ({logits.shape[0]},), got {tuple(grad.shape)}")
    cfg = config_for(logits, config)
    x, t, g = logits.contiguous(), targets.contiguous(), grad.contiguous()
    dx = torch.empty_like(x)
    if dx.numel():
        _cross_entropy_bwd_kernel[(x.shape[0],)](x, t, g, dx, x.shape[1], ignore_index,
                                                 BLOCK=row_block(cfg, x.shape[1]), num_warps=cfg["num_warps"])
    return dx


def _cross_entropy_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (logits, targets, ignore_index), (g,) = args, grads
    if g is None or not on_kernels(logits):
        return None
    return cross_entropy_loss_backward_launch(logits, targets, g, ignore_index), None, None


@zoo_custom_op("cudal1::cross_entropy_loss", mutates_args=(), ref=cross_entropy_loss_ref,
               fast_backward=_cross_entropy_loss_backward)
def _cross_entropy_loss_op(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int) -> torch.Tensor:
    if logits.is_cuda:
        return cross_entropy_loss_launch(logits, targets, ignore_index)
    return cross_entropy_loss_ref(logits, targets, ignore_index)


@_cross_entropy_loss_op.register_fake
def _(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int) -> torch.Tensor:
    return logits.new_empty(logits.shape[:1])


def cross_entropy_loss(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    """Per-sample cross-entropy of ``logits`` (N, C) against class indices ``targets`` (N,) -> (N,)
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.cross_entropy_loss``."""
    _check(logits, targets, ignore_index)
    return call("cross_entropy_loss", logits, targets, int(ignore_index))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_cross_entropy_loss_kernel", {
        "x_ptr": "*fp32", "t_ptr": "*i64", "out_ptr": "*fp32", "n_cols": "i32", "ignore_index": "i32"}),
    TritonKernel("_cross_entropy_bwd_kernel", {
        "x_ptr": "*bf16", "t_ptr": "*i64", "g_ptr": "*bf16", "dx_ptr": "*bf16", "n_cols": "i32", "ignore_index": "i32"}),
]


_REDUCTIONS = ("none", "mean", "sum")


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, *, ignore_index: int = -100,
                  label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """``F.cross_entropy(logits, targets, ignore_index=, label_smoothing=, reduction=)`` for class indices.
    ``mean`` (over the non-ignored rows; nan when every row is ignored, as torch) and ``sum``: one fused op that
    also computes the gradient while it reads the logits (:mod:`.cross_entropy_fused`); ``none``: the per-sample
    kernel, with smoothing eps each row's loss being ``ce + eps * (z[t] - mean_j z[j])`` (the same as torch's
    ``(1 - eps) * ce + eps * (lse - mean z)``), differentiable through the ops it is made of."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must lie in [0, 1], got {label_smoothing}")
    if reduction != "none":
        _check(logits, targets, ignore_index)
        return cross_entropy_fused(logits, targets, ignore_index, label_smoothing, reduction)
    rows = cross_entropy_loss(logits, targets, ignore_index)
    keep = targets != ignore_index
    if label_smoothing:
        from .mean_dim import mean_dim

        safe = torch.where(keep, targets, torch.zeros_like(targets))
        z_t = logits.gather(1, safe[:, None]).squeeze(1)
        rows = rows + label_smoothing * torch.where(keep, z_t - mean_dim(logits, -1), torch.zeros_like(z_t))
    if reduction == "none":
        return rows
    return rows.sum() if reduction == "sum" else rows.sum() / keep.sum()
