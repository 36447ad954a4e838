"""Per-sample triplet margin loss with L2 distance:
``out[i] = max(d(a_i, p_i) - d(a_i, n_i) + margin, 0)`` with ``d(u, v) = ||u - v + eps||_2`` (torch's
``pairwise_distance``); with ``swap``, ``d(a, n)`` is replaced by ``min(d(a, n), d(p, n))``. As
``nn.TripletMarginLoss(margin, p=2, eps, swap, reduction="none")``.

Shapes: ``anchor``, ``positive``, ``negative`` (N, D), same shape; float32 (fp32 math); output (N,) float32.
One program per row, one pass accumulating both squared distances: reads 3 * N * D elements, writes N
values (eager: two subtractions, two norms, temporaries the size of the inputs).

Backward (``triplet_margin_loss_backward_launch``, CUDA, fp32/bf16/fp16): one program per row recomputes the
distances (one read), then writes the gradients of the inputs that want one (a second read, one write each):
with ``u = a - p + eps``, ``v = a - n + eps``, ``s = p - n + eps`` and ``k_x = g[i] * w_x / d_x``,
``da = u k_p - v k_n``, ``dp = -u k_p - s k_s``, ``dn = v k_n + s k_s``. torch's conventions: no gradient where
the hinge is not strictly positive (at exactly 0 included), none through a zero distance, and ``swap``'s min
gives ``w_n = 1, w_s = 0`` to the smaller distance and 1/2 each on a tie (``w_n = 1, w_s = 0`` without swap).
The reference's vector-Jacobian product elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_rows import CONFIGS, check_rows, config_for, row_block

__all__ = ["CONFIGS", "triplet_margin_loss", "triplet_margin_loss_backward_launch", "triplet_margin_loss_launch",
           "triplet_margin_loss_ref"]


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


@triton.jit
def _triplet_margin_bwd_kernel(a_ptr, p_ptr, n_ptr, g_ptr, da_ptr, dp_ptr, dn_ptr, n_cols, margin, eps,
                               SWAP: tl.constexpr, DA: tl.constexpr, DP: tl.constexpr, DN: tl.constexpr,
                               BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc_p = tl.zeros([BLOCK], tl.float32)
    acc_n = tl.zeros([BLOCK], tl.float32)
    acc_s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(a_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        n = tl.load(n_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.where(mask, a - p + eps, 0.0)
        v = tl.where(mask, a - n + eps, 0.0)
        acc_p += u * u
        acc_n += v * v
        if SWAP:
            s = tl.where(mask, p - n + eps, 0.0)
            acc_s += s * s
    d_p = tl.sqrt_rn(tl.sum(acc_p, 0))
    d_n = tl.sqrt_rn(tl.sum(acc_n, 0))
    g = tl.load(g_ptr + row).to(tl.float32)
    if SWAP:
        d_s = tl.sqrt_rn(tl.sum(acc_s, 0))
        w_n = tl.where(d_n == d_s, 0.5, tl.where(d_n > d_s, 0.0, 1.0))  # torch's minimum: NaN gives both 1
        w_s = tl.where(d_n == d_s, 0.5, tl.where(d_s > d_n, 0.0, 1.0))
        d_neg = tl.minimum(d_n, d_s, propagate_nan=tl.PropagateNan.ALL)
        g = tl.where(margin + d_p - d_neg > 0.0, g, 0.0)
        k_s = tl.where(d_s == 0.0, 0.0, g * w_s / d_s)
    else:
        w_n = 1.0
        g = tl.where(margin + d_p - d_n > 0.0, g, 0.0)
    k_p = tl.where(d_p == 0.0, 0.0, g / d_p)  # torch's norm backward: 0 through a zero norm
    k_n = tl.where(d_n == 0.0, 0.0, g * w_n / d_n)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(a_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        n = tl.load(n_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        u = (a - p + eps) * k_p
        v = (a - n + eps) * k_n
        grad_p = -u
        grad_n = v
        if SWAP:
            s = (p - n + eps) * k_s
            grad_p -= s
            grad_n += s
        if DA:
            tl.store(da_ptr + base + cols, (u - v).to(da_ptr.dtype.element_ty), mask=mask)
        if DP:
            tl.store(dp_ptr + base + cols, grad_p.to(dp_ptr.dtype.element_ty), mask=mask)
        if DN:
            tl.store(dn_ptr + base + cols, grad_n.to(dn_ptr.dtype.element_ty), mask=mask)


def triplet_margin_loss_backward_launch(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                                        grad: torch.Tensor, margin: float = 1.0, eps: float = 1e-6,
                                        swap: bool = False, wants: tuple[bool, bool, bool] = (True, True, True),
                                        config: dict | None = None) -> tuple[torch.Tensor | None, ...]:
    """``(danchor, dpositive, dnegative)`` (N, D), contiguous in their inputs' dtypes, of the per-sample losses
    for their gradient ``grad`` (N,); ``wants``: which of the three to compute (None for the others)."""
    _check(anchor, positive, negative)
    if grad.shape != anchor.shape[:1]:
        raise ValueError(f"triplet_margin_loss: grad must have shape ({anchor.shape[0]},), got {tuple(grad.shape)}")
    cfg = config_for(anchor, config)
    ins = [anchor.contiguous(), positive.contiguous(), negative.contiguous()]
    outs = [torch.empty_like(x) if w else None for x, w in zip(ins, wants, strict=True)]
    n_cols = ins[0].shape[1]
    if ins[0].numel() and any(wants):
        _triplet_margin_bwd_kernel[(ins[0].shape[0],)](
            *ins, grad.contiguous(), *(x if o is None else o for x, o in zip(ins, outs, strict=True)), n_cols,
            float(margin), float(eps), SWAP=bool(swap), DA=wants[0], DP=wants[1], DN=wants[2],
            BLOCK=row_block(cfg, n_cols), num_warps=cfg["num_warps"])
    return tuple(outs)


def _triplet_margin_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (anchor, positive, negative, margin, eps, swap), (g,) = args, grads
    if g is None or not on_kernels(anchor, positive, negative):
        return None
    return (*triplet_margin_loss_backward_launch(anchor, positive, negative, g, margin, eps, swap, needs[:3]),
            None, None, None)


@zoo_custom_op("cudal1::triplet_margin_loss", mutates_args=(), ref=triplet_margin_loss_ref,
               fast_backward=_triplet_margin_loss_backward)
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
    "eps": "fp32"}, constexprs={"SWAP": False}),
                  TritonKernel("_triplet_margin_bwd_kernel", {
                      "a_ptr": "*bf16", "p_ptr": "*bf16", "n_ptr": "*bf16", "g_ptr": "*bf16", "da_ptr": "*bf16",
                      "dp_ptr": "*bf16", "dn_ptr": "*bf16", "n_cols": "i32", "margin": "fp32", "eps": "fp32"},
                      constexprs={"SWAP": True, "DA": True, "DP": True, "DN": True})]
