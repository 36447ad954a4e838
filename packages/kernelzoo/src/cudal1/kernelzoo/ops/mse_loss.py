"""Per-sample mean squared error: ``out[i] = mean_j (pred[i, j] - target[i, j])**2``, i.e.
``F.mse_loss(pred, target, reduction="none").mean(-1)``.

Shapes: ``predictions``, ``targets`` (..., D), same shape; float32 (fp16/bf16 read, fp32 math, output in the
input dtype); output (...). One program per row, one pass: reads 2 * rows * D elements, writes ``rows``
values (eager writes and re-reads the elementwise (rows, D) loss: twice the traffic and a full-size temporary).

Backward (CUDA, fp32/bf16/fp16; :mod:`._loss_backward`): one elementwise pass writes ``dpred = 2 * (pred -
target) * g[i] / D`` and, where the targets want a gradient, ``dtarget = -dpred``, with ``g`` read from the device;
the reference's vector-Jacobian product elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_backward import CONFIGS as LOSS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._loss_backward import backward_kernel, pointwise_loss_backward_launch
from ._loss_rows import CONFIGS, check_rows, config_for, row_block, rows_out

__all__ = ["CONFIGS", "mse_loss", "mse_loss_launch", "mse_loss_ref"]


def mse_loss_ref(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """PyTorch reference (the built-in task's expression)."""
    return torch.nn.functional.mse_loss(predictions, targets, reduction="none").mean(dim=-1)


@triton.jit
def _mse_loss_kernel(p_ptr, t_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        t = tl.load(t_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        d = p - t
        acc += d * d
    tl.store(out_ptr + row, (tl.sum(acc, 0) / n_cols).to(out_ptr.dtype.element_ty))


def mse_loss_launch(predictions: torch.Tensor, targets: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``predictions``, ``targets`` (..., D); returns (...)."""
    check_rows("mse_loss", predictions, targets)
    cfg = config_for(predictions, config)
    p, t = predictions.contiguous(), targets.contiguous()
    out = rows_out(p)
    n_cols = p.shape[-1]
    if out.numel():
        _mse_loss_kernel[(out.numel(),)](p, t, out, n_cols, BLOCK=row_block(cfg, n_cols),
                                         num_warps=cfg["num_warps"])
    return out


def _mse_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (predictions, targets), (g,) = args, grads
    if g is None or not on_kernels(predictions, targets):
        return None
    dp, dt, _ = pointwise_loss_backward_launch("mse", predictions, targets, g, wants=(needs[0], needs[1], False))
    return dp, dt


@zoo_custom_op("cudal1::mse_loss", mutates_args=(), ref=mse_loss_ref, fast_backward=_mse_loss_backward)
def _mse_loss_op(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    if predictions.is_cuda:
        return mse_loss_launch(predictions, targets)
    return mse_loss_ref(predictions, targets)


@_mse_loss_op.register_fake
def _(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return predictions.new_empty(predictions.shape[:-1])


def mse_loss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-sample MSE: mean over the last dim of ``(predictions - targets)**2``; (..., D) -> (...)
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.mse_loss``."""
    check_rows("mse_loss", predictions, targets)
    return call("mse_loss", predictions, targets)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_mse_loss_kernel", {"p_ptr": "*fp32", "t_ptr": "*fp32", "out_ptr": "*fp32",
                                                    "n_cols": "i32"}),
                  backward_kernel("mse")]
