"""Cross-entropy reduced to one loss (``mean`` over non-ignored rows, or ``sum``), with label smoothing, and its
gradient computed in the same kernel as the loss when one is wanted (the form a training loss takes)::

    row[i]  = (1 - eps) * (lse_i - z[i, t_i]) + eps * (lse_i - mean_j z[i, j])     (0 where t_i == ignore_index)
    loss    = sum_i row[i] * s,   s = 1 / (non-ignored rows) for mean, 1 for sum
    dz[i,j] = s * (softmax_j(z_i) - (1 - eps) * [j == t_i] - eps / V)             (0 for ignored rows)

Shapes: ``logits`` (N, V) fp32, bf16 or fp16 (fp32 math); ``targets`` (N,) int64/int32 in [0, V) or
``ignore_index``; output a 0-d fp32 loss. One program per row: an online log-sum-exp pass (one read), then,
with a gradient wanted, a pass writing ``dz`` in the logits' dtype (a second read, one write): the backward
only scales ``dz`` by the incoming gradient, in place, and not at all when that is exactly 1 (the usual
``loss.backward()``; checking costs one device sync). Eager PyTorch's forward + backward reads the logits
three times and writes two (N, V) temporaries. CPU and float64: the same formulas in PyTorch.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._forward_gradients import forward_gradients
from ._loss_rows import CONFIGS, config_for, row_block
from ._online_lse import row_lse_parts

__all__ = ["CONFIGS", "cross_entropy_fused", "cross_entropy_fused_launch", "cross_entropy_fused_ref"]



def cross_entropy_fused_ref(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                            label_smoothing: float = 0.0, reduction: str = "mean",
                            with_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """PyTorch reference: ``(F.cross_entropy(logits upcast to fp32, ...), an empty gradient buffer)``."""
    loss = torch.nn.functional.cross_entropy(logits.to(torch.promote_types(logits.dtype, torch.float32)), targets,
                                             ignore_index=ignore_index, label_smoothing=label_smoothing,
                                             reduction=reduction)
    return loss, logits.new_empty(0)


@triton.jit
def _ce_fused_kernel(x_ptr, t_ptr, s_ptr, row_ptr, dx_ptr, n_cols, ignore_index, eps, WITH_GRAD: tl.constexpr,
                     SMOOTH: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    t = tl.load(t_ptr + row).to(tl.int64)
    ignored = t == ignore_index
    m, acc, zs = row_lse_parts(x_ptr, base, n_cols, SMOOTH, BLOCK)
    lse = m + tl.log(acc)
    x_t = tl.load(x_ptr + base + tl.where(ignored, 0, t)).to(tl.float32)
    loss = (1.0 - eps) * (lse - x_t)
    if SMOOTH:
        loss += eps * (lse - zs / n_cols)
    tl.store(row_ptr + row, tl.where(ignored, 0.0, loss))
    if WITH_GRAD:
        s = tl.load(s_ptr)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            d = tl.exp(x - lse) - tl.where(cols == t, 1.0 - eps, 0.0)
            if SMOOTH:
                d -= eps / n_cols
            d = tl.where(ignored, 0.0, d * s)
            tl.store(dx_ptr + base + cols, d.to(dx_ptr.dtype.element_ty), mask=mask)


def _scale(targets: torch.Tensor, ignore_index: int, reduction: str) -> torch.Tensor:
    """s as a 1-element fp32 device tensor (no sync): 1 / non-ignored rows for mean (inf with none: nan loss,
    as torch), 1 for sum."""
    if reduction == "sum":
        return torch.ones(1, dtype=torch.float32, device=targets.device)
    return 1.0 / (targets != ignore_index).sum().to(torch.float32).reshape(1)


def cross_entropy_fused_launch(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                               label_smoothing: float = 0.0, reduction: str = "mean", with_grad: bool = True,
                               config: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the Triton kernel: ``(loss, dlogits)`` (``dlogits`` empty unless ``with_grad``); inputs as checked
    by :func:`cudal1.kernelzoo.ops.cross_entropy_loss.cross_entropy`."""
    cfg = config_for(logits, config)
    x, t = logits.contiguous(), targets.contiguous()
    n, v = x.shape
    s = _scale(t, ignore_index, reduction)
    rows = torch.empty(n, dtype=torch.float32, device=x.device)
    dx = torch.empty_like(x) if with_grad else x.new_empty(0)
    if n:
        _ce_fused_kernel[(n,)](x, t, s, rows, dx if with_grad else x, v, ignore_index, float(label_smoothing),
                               WITH_GRAD=with_grad, SMOOTH=label_smoothing != 0.0, BLOCK=row_block(cfg, v),
                               num_warps=cfg["num_warps"])
    return rows.sum() * s[0], dx


def _torch_path(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int, label_smoothing: float,
                reduction: str, with_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The same loss and gradient buffer with PyTorch ops (CPU, float64)."""
    loss, _ = cross_entropy_fused_ref(logits, targets, ignore_index, label_smoothing, reduction)
    if not with_grad:
        return loss, logits.new_empty(0)
    z = logits.to(torch.promote_types(logits.dtype, torch.float32))
    keep = targets != ignore_index
    d = torch.softmax(z, -1) - label_smoothing / z.shape[1]
    d[torch.arange(z.shape[0]), torch.where(keep, targets, 0)] -= 1.0 - label_smoothing
    s = _scale(targets, ignore_index, reduction).to(z.dtype)
    return loss, (d * (keep.to(z.dtype)[:, None] * s)).to(logits.dtype)


# the gradient computed in the forward, handed to autograd without a copy (see _forward_gradients)
_setup, _backward = forward_gradients("cross_entropy_fused", lambda *a: _ce_fused_impl(*a), grad_of=(0,))


@zoo_custom_op("cudal1::cross_entropy_fused", mutates_args=(), ref=cross_entropy_fused_ref, backward=_backward,
               setup_context=_setup)
def _ce_fused_op(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int, label_smoothing: float,
                 reduction: str, with_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _ce_fused_impl(logits, targets, ignore_index, label_smoothing, reduction, with_grad)


def _ce_fused_impl(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int, label_smoothing: float,
                   reduction: str, with_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if on_kernels(logits):
        return cross_entropy_fused_launch(logits, targets, ignore_index, label_smoothing, reduction, with_grad)
    return _torch_path(logits, targets, ignore_index, label_smoothing, reduction, with_grad)


@_ce_fused_op.register_fake
def _(logits, targets, ignore_index, label_smoothing, reduction, with_grad):
    acc = torch.promote_types(logits.dtype, torch.float32)
    return (logits.new_empty((), dtype=acc),
            torch.empty_like(logits, memory_format=torch.contiguous_format) if with_grad else logits.new_empty(0))


def cross_entropy_fused(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                        label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """The reduced loss (see the module docstring; inputs checked by the caller,
    :func:`cudal1.kernelzoo.ops.cross_entropy_loss.cross_entropy`); ``torch.ops.cudal1.cross_entropy_fused``."""
    with_grad = torch.is_grad_enabled() and logits.requires_grad
    return call("cross_entropy_fused", logits, targets, int(ignore_index), float(label_smoothing), reduction,
                with_grad)[0]


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_ce_fused_kernel", {
    "x_ptr": "*bf16", "t_ptr": "*i64", "s_ptr": "*fp32", "row_ptr": "*fp32", "dx_ptr": "*bf16", "n_cols": "i32",
    "ignore_index": "i32", "eps": "fp32"}, constexprs={"WITH_GRAD": True, "SMOOTH": False})]
