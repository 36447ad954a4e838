"""Per-sample triplet margin loss with L2 distance:
``out[i] = max(d(a_i, p_i) - d(a_i, n_i) + margin, 0)`` with ``d(u, v) = ||u - v + eps||_2`` (torch's
``pairwise_distance``); with ``swap``, ``d(a, n)`` is replaced by ``min(d(a, n), d(p, n))``. As
``nn.TripletMarginLoss(margin, p=2, eps, swap, reduction="none")``.

Shapes: ``anchor``, ``positive``, ``negative`` (N, D), same shape; float32 (fp32 math); output (N,) float32.
One program per row, one pass accumulating both squared distances: reads 3 * N * D elements, writes N
values (eager: two subtractions, two norms, temporaries the size of the inputs).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._loss_rows import CONFIGS, check_rows, config_for, row_block

__all__ = ["CONFIGS", "triplet_margin_loss", "triplet_margin_loss_launch", "triplet_margin_loss_ref"]


def triplet_margin_loss_ref(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                            margin: float = 1.0, eps: float = 1e-6, swap: bool = False) -> torch.Tensor:
    """PyTorch reference (the built-in task's ``nn.TripletMarginLoss``, functional form)."""
    return torch.nn.functional.triplet_margin_loss(anchor, positive, negative, margin=margin, p=2.0, eps=eps,
                                                   swap=swap, reduction="none")


@triton.jit
def _triplet_margin_loss_kernel(a_ptr, p_ptr, n_ptr, out_ptr, n_cols, margin, eps,
                                SWAP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc_p = tl.zeros([BLOCK], tl.float32)
    acc_n = tl.zeros([BLOCK], tl.float32)
    acc_s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(a_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        n = tl.load(n_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        dp = tl.where(mask, a - p + eps, 0.0)  # masked lanes would add eps**2
        dn = tl.where(mask, a - n + eps, 0.0)
        acc_p += dp * dp
        acc_n += dn * dn
        if SWAP:
            ds = tl.where(mask, p - n + eps, 0.0)
            acc_s += ds * ds
    d_p = tl.sqrt_rn(tl.sum(acc_p, 0))
    d_n = tl.sqrt_rn(tl.sum(acc_n, 0))
    if SWAP:
        d_n = tl.minimum(d_n, tl.sqrt_rn(tl.sum(acc_s, 0)))
    loss = margin + d_p - d_n
    loss = tl.where(loss < 0.0, 0.0, loss)  # clamp_min that keeps NaN, as torch
    tl.store(out_ptr + row, loss.to(out_ptr.dtype.element_ty))


def _check(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> None:
    check_rows("triplet_margin_loss", anchor, positive, negative, min_dim=2)
    if anchor.dim() != 2:
        raise ValueError(f"triplet_margin_loss: inputs must be (N, D), got {tuple(anchor.shape)}")


def triplet_margin_loss_launch(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                               margin: float = 1.0, eps: float = 1e-6, swap: bool = False,
                               config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``anchor``, ``positive``, ``negative`` (N, D); returns (N,)."""
    _check(anchor, positive, negative)
    cfg = config_for(anchor, config)
    a, p, n = anchor.contiguous(), positive.contiguous(), negative.contiguous()
    out = torch.empty(a.shape[:1], dtype=a.dtype, device=a.device)
    n_cols = a.shape[1]
    if out.numel():
        _triplet_margin_loss_kernel[(out.numel(),)](a, p, n, out, n_cols, float(margin), float(eps), SWAP=bool(swap),
                                                    BLOCK=row_block(cfg, n_cols), num_warps=cfg["num_warps"])
    return out


@zoo_custom_op("cudal1::triplet_margin_loss", mutates_args=(), ref=triplet_margin_loss_ref)
def _triplet_margin_loss_op(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float,
                            eps: float, swap: bool) -> torch.Tensor:
    if anchor.is_cuda:
        return triplet_margin_loss_launch(anchor, positive, negative, margin, eps, swap)
    return triplet_margin_loss_ref(anchor, positive, negative, margin, eps, swap)


@_triplet_margin_loss_op.register_fake
def _(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float, eps: float,
      swap: bool) -> torch.Tensor:
    return anchor.new_empty(anchor.shape[:1])


def triplet_margin_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float = 1.0,
                        eps: float = 1e-6, swap: bool = False) -> torch.Tensor:
    """Per-sample L2 triplet margin loss of ``anchor``, ``positive``, ``negative`` (N, D) -> (N,)
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.triplet_margin_loss``."""
    _check(anchor, positive, negative)
    return call("triplet_margin_loss", anchor, positive, negative, float(margin), float(eps), bool(swap))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_triplet_margin_loss_kernel", {
    "a_ptr": "*fp32", "p_ptr": "*fp32", "n_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "margin": "fp32",
    "eps": "fp32"}, constexprs={"SWAP": False})]
