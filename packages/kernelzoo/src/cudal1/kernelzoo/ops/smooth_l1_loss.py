"""Per-sample smooth L1 loss: ``out[i] = mean_j l(pred[i, j] - target[i, j])`` with
``l(d) = 0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``beta == 0``: ``|d|``), i.e.
``F.smooth_l1_loss(pred, target, beta=beta, reduction="none").mean(-1)``.

Shapes: ``predictions``, ``targets`` (..., D), same shape; float32 (fp32 math); output (...). One program per
row, one pass: reads 2 * rows * D elements, writes ``rows`` values (eager: twice the traffic plus a
full-size temporary).

Backward (CUDA, fp32/bf16/fp16; :mod:`._loss_backward`): one elementwise pass writes ``dpred = g[i] / D *
(-1 if d <= -beta, 1 if d >= beta, else d / beta)`` (``d = pred - target``; torch's kinks: +-1 at ``|d| ==
beta``) and, where the targets want a gradient, ``dtarget = -dpred``; ``beta == 0`` is torch's ``l1_loss``,
``sgn(d)`` (0 at ``d == 0``). The reference's vector-Jacobian product elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_backward import CONFIGS as LOSS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._loss_backward import backward_kernel, pointwise_loss_backward_launch
from ._loss_rows import CONFIGS, check_rows, config_for, row_block, rows_out

__all__ = ["CONFIGS", "smooth_l1_loss", "smooth_l1_loss_launch", "smooth_l1_loss_ref"]


def smooth_l1_loss_ref(predictions: torch.Tensor, targets: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """PyTorch reference (the built-in task's expression)."""
    return torch.nn.functional.smooth_l1_loss(predictions, targets, beta=beta, reduction="none").mean(dim=-1)


@triton.jit
def _smooth_l1_loss_kernel(p_ptr, t_ptr, out_ptr, n_cols, beta, half_inv_beta, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        t = tl.load(t_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        z = tl.abs(p - t)
        acc += tl.where(z < beta, z * z * half_inv_beta, z - 0.5 * beta)
    tl.store(out_ptr + row, (tl.sum(acc, 0) / n_cols).to(out_ptr.dtype.element_ty))


def _check_beta(beta: float) -> None:
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")


def smooth_l1_loss_launch(predictions: torch.Tensor, targets: torch.Tensor, beta: float = 1.0,
                          config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``predictions``, ``targets`` (..., D); returns (...)."""
    check_rows("smooth_l1_loss", predictions, targets)
    _check_beta(beta)
    cfg = config_for(predictions, config)
    p, t = predictions.contiguous(), targets.contiguous()
    out = rows_out(p)
    n_cols = p.shape[-1]
    if out.numel():
        half_inv_beta = 0.5 / beta if beta > 0 else 0.0  # beta == 0: the quadratic branch is never taken
        _smooth_l1_loss_kernel[(out.numel(),)](p, t, out, n_cols, float(beta), half_inv_beta,
                                               BLOCK=row_block(cfg, n_cols), num_warps=cfg["num_warps"])
    return out


def _smooth_l1_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (predictions, targets, beta), (g,) = args, grads
    if g is None or not on_kernels(predictions, targets):
        return None
    dp, dt, _ = pointwise_loss_backward_launch("smooth_l1" if beta > 0 else "l1", predictions, targets, g, beta=beta,
                                               wants=(needs[0], needs[1], False))
    return dp, dt, None


@zoo_custom_op("cudal1::smooth_l1_loss", mutates_args=(), ref=smooth_l1_loss_ref,
               fast_backward=_smooth_l1_loss_backward)
def _smooth_l1_loss_op(predictions: torch.Tensor, targets: torch.Tensor, beta: float) -> torch.Tensor:
    if predictions.is_cuda:
        return smooth_l1_loss_launch(predictions, targets, beta)
    return smooth_l1_loss_ref(predictions, targets, beta)


@_smooth_l1_loss_op.register_fake
def _(predictions: torch.Tensor, targets: torch.Tensor, beta: float) -> torch.Tensor:
    return predictions.new_empty(predictions.shape[:-1])


def smooth_l1_loss(predictions: torch.Tensor, targets: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """Per-sample smooth L1 loss: mean over the last dim; (..., D) -> (...); ``beta >= 0`` (Triton on CUDA,
    the reference on CPU); ``torch.ops.cudal1.smooth_l1_loss``."""
    check_rows("smooth_l1_loss", predictions, targets)
    _check_beta(beta)
    return call("smooth_l1_loss", predictions, targets, float(beta))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_smooth_l1_loss_kernel", {
    "p_ptr": "*fp32", "t_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "beta": "fp32",
    "half_inv_beta": "fp32"}), backward_kernel("smooth_l1"), backward_kernel("l1")]
