"""Per-sample KL divergence: ``out[i] = sum_j xlogy(p[i, j], p[i, j]) - p[i, j] * log_q[i, j]``, i.e.
``F.kl_div(log_q, p, reduction="none").sum(-1)`` (``log_target=False``: ``log_q`` is a log-probability,
``p`` a probability; ``p == 0`` contributes ``0 - 0 * log_q``, as torch).

Shapes: ``log_q``, ``p`` (..., D), same shape; float32 (fp32 math); output (...). One program per row, one
pass: reads 2 * rows * D elements, writes ``rows`` values (eager: twice the traffic plus a full-size temporary).
Backward (CUDA, gradient of ``log_q`` only): ``dlog_q = -p * g_row`` in one elementwise pass; the reference's
vector-Jacobian product where ``p`` wants a gradient too, or off CUDA.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_rows import CONFIGS, check_rows, config_for, row_block, rows_out

__all__ = ["CONFIGS", "kl_div_loss", "kl_div_loss_backward_launch", "kl_div_loss_launch", "kl_div_loss_ref"]


def kl_div_loss_ref(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """PyTorch reference (the built-in task's expression)."""
    return torch.nn.functional.kl_div(log_q, p, reduction="none").sum(dim=-1)


@triton.jit
def _kl_div_loss_kernel(lq_ptr, p_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        lq = tl.load(lq_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        # xlogy(p, p): 0 where p == 0 (masked lanes too), NaN for p < 0 or NaN, as torch
        acc += tl.where(p == 0.0, 0.0, p * tl.log(p)) - p * lq
    tl.store(out_ptr + row, tl.sum(acc, 0).to(out_ptr.dtype.element_ty))


def kl_div_loss_launch(log_q: torch.Tensor, p: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``log_q``, ``p`` (..., D); returns (...)."""
    check_rows("kl_div_loss", log_q, p)
    cfg = config_for(log_q, config)
    lq, pc = log_q.contiguous(), p.contiguous()
    out = rows_out(lq)
    n_cols = lq.shape[-1]
    if out.numel():
        _kl_div_loss_kernel[(out.numel(),)](lq, pc, out, n_cols, BLOCK=row_block(cfg, n_cols),
                                            num_warps=cfg["num_warps"])
    return out


@triton.jit
def _kl_div_bwd_kernel(p_ptr, g_ptr, dq_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = tl.load(p_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + row).to(tl.float32)
    tl.store(dq_ptr + row * n_cols + cols, (-p * g).to(dq_ptr.dtype.element_ty), mask=mask)


def kl_div_loss_backward_launch(log_q: torch.Tensor, p: torch.Tensor, grad: torch.Tensor,
                                config: dict | None = None) -> torch.Tensor:
    """``dlog_q`` (``log_q``'s shape and dtype) of the per-row losses for their gradient ``grad`` (...)."""
    if grad.shape != log_q.shape[:-1]:
        raise ValueError(f"grad must have shape {tuple(log_q.shape[:-1])}, got {tuple(grad.shape)}")
    cfg = config_for(log_q, config)
    pc, g = p.contiguous(), grad.contiguous()
    dq = torch.empty(log_q.shape, dtype=log_q.dtype, device=log_q.device)
    n_cols = log_q.shape[-1]
    if dq.numel():
        block = row_block(cfg, n_cols)
        _kl_div_bwd_kernel[(g.numel(), triton.cdiv(n_cols, block))](pc, g, dq, n_cols, BLOCK=block,
                                                                   num_warps=cfg["num_warps"])
    return dq


def _kl_div_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (log_q, p), (g,) = args, grads
    if g is None or needs[1] or not on_kernels(log_q):
        return None
    return kl_div_loss_backward_launch(log_q, p, g) if needs[0] else None, None


@zoo_custom_op("cudal1::kl_div_loss", mutates_args=(), ref=kl_div_loss_ref, fast_backward=_kl_div_loss_backward)
def _kl_div_loss_op(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return kl_div_loss_launch(log_q, p) if log_q.is_cuda else kl_div_loss_ref(log_q, p)


@_kl_div_loss_op.register_fake
def _(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return log_q.new_empty(log_q.shape[:-1])


def kl_div_loss(log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Per-sample KL(p || q) from ``log_q`` and ``p`` (..., D), summed over the last dim -> (...)
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.kl_div_loss``."""
    check_rows("kl_div_loss", log_q, p)
    return call("kl_div_loss", log_q, p)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_kl_div_loss_kernel", {"lq_ptr": "*fp32", "p_ptr": "*fp32", "out_ptr": "*fp32",
                                                       "n_cols": "i32"}),
                  TritonKernel("_kl_div_bwd_kernel", {"p_ptr": "*bf16", "g_ptr": "*fp32", "dq_ptr": "*bf16",
                                                      "n_cols": "i32"})]
