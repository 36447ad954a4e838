"""Per-sample cosine embedding loss: with ``cos = <x1, x2> / sqrt((|x1|^2 + 1e-12) * (|x2|^2 + 1e-12))``,
``out[i] = 1 - cos`` where ``y[i] == 1``, ``max(cos - margin, 0)`` where ``y[i] == -1``, 0 otherwise, i.e.
``F.cosine_embedding_loss(x1, x2, y, margin=margin, reduction="none")`` (torch's formula and epsilon).

Shapes: ``x1``, ``x2`` (N, D) float32 (fp32 math); ``y`` (N,) of +1/-1 (any real or integer dtype); output
(N,) float32. One program per row, one pass accumulating the dot product and both squared norms: reads
2 * N * D elements, writes N values (eager: three products, three reductions, temporaries).

Backward (``cosine_embedding_loss_backward_launch``, CUDA, fp32/bf16/fp16): one program per row recomputes the
dot product and both norms (one read), then writes ``dx1 = k * (x2 / denom - cos * x1 / (|x1|^2 + 1e-12))`` and
``dx2`` alike (a second read, one write each, only for the inputs that want one), ``k = g[i] * dloss/dcos``:
-1 where ``y == 1``, 1 where ``y == -1`` and ``cos - margin > 0`` (torch's clamp_min passes no gradient at the
hinge itself), else 0. ``y`` gets zeros (it only selects). The reference's vector-Jacobian product elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_rows import CONFIGS, check_rows, config_for, row_block

__all__ = ["CONFIGS", "cosine_embedding_loss", "cosine_embedding_loss_backward_launch", "cosine_embedding_loss_launch",
           "cosine_embedding_loss_ref"]


def cosine_embedding_loss_ref(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, margin: float = 0.0
                              ) -> torch.Tensor:
    """PyTorch reference (the built-in task's expression)."""
    return torch.nn.functional.cosine_embedding_loss(x1, x2, y, margin=margin, reduction="none")


@triton.jit
def _cosine_embedding_loss_kernel(x1_ptr, x2_ptr, y_ptr, out_ptr, n_cols, margin, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    dot = tl.zeros([BLOCK], tl.float32)
    n1 = tl.zeros([BLOCK], tl.float32)
    n2 = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(x1_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        b = tl.load(x2_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        dot += a * b
        n1 += a * a
        n2 += b * b
    denom = tl.sqrt_rn((tl.sum(n1, 0) + 1e-12) * (tl.sum(n2, 0) + 1e-12))
    cos = tl.sum(dot, 0) / denom
    y = tl.load(y_ptr + row)
    neg = cos - margin
    neg = tl.where(neg < 0.0, 0.0, neg)  # clamp_min that keeps NaN, as torch
    loss = tl.where(y == 1, 1.0 - cos, tl.where(y == -1, neg, 0.0))
    tl.store(out_ptr + row, loss.to(out_ptr.dtype.element_ty))


def _check(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> None:
    check_rows("cosine_embedding_loss", x1, x2, min_dim=2)
    if x1.dim() != 2 or y.shape != x1.shape[:1] or y.device != x1.device or y.dtype == torch.bool:
        raise ValueError(f"cosine_embedding_loss: x1, x2 must be (N, D) and y (N,) of +1/-1 on their device, got "
                         f"{tuple(x1.shape)}, {tuple(y.shape)} {y.dtype} on {y.device}")


def cosine_embedding_loss_launch(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, margin: float = 0.0,
                                 config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x1``, ``x2`` (N, D) and ``y`` (N,); returns (N,)."""
    _check(x1, x2, y)
    cfg = config_for(x1, config)
    a, b, yc = x1.contiguous(), x2.contiguous(), y.contiguous()
    out = torch.empty(a.shape[:1], dtype=a.dtype, device=a.device)
    n_cols = a.shape[1]
    if out.numel():
        _cosine_embedding_loss_kernel[(out.numel(),)](a, b, yc, out, n_cols, float(margin),
                                                      BLOCK=row_block(cfg, n_cols), num_warps=cfg["num_warps"])
    return out


@triton.jit
def _cosine_embedding_bwd_kernel(x1_ptr, x2_ptr, y_ptr, g_ptr, dx1_ptr, dx2_ptr, n_cols, margin, DX1: tl.constexpr,
                                 DX2: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    dot = tl.zeros([BLOCK], tl.float32)
    n1 = tl.zeros([BLOCK], tl.float32)
    n2 = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(x1_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x2_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        dot += a * b
        n1 += a * a
        n2 += b * b
    m1 = tl.sum(n1, 0) + 1e-12
    m2 = tl.sum(n2, 0) + 1e-12
    denom = tl.sqrt_rn(m1 * m2)
    cos = tl.sum(dot, 0) / denom
    y = tl.load(y_ptr + row)
    dcos = tl.where(y == 1, -1.0, tl.where((y == -1) & (cos - margin > 0.0), 1.0, 0.0))
    k = tl.load(g_ptr + row).to(tl.float32) * dcos
    k_d = k / denom
    k_1 = k * cos / m1
    k_2 = k * cos / m2
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(x1_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        b = tl.load(x2_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        if DX1:
            tl.store(dx1_ptr + base + cols, (b * k_d - a * k_1).to(dx1_ptr.dtype.element_ty), mask=mask)
        if DX2:
            tl.store(dx2_ptr + base + cols, (a * k_d - b * k_2).to(dx2_ptr.dtype.element_ty), mask=mask)


def cosine_embedding_loss_backward_launch(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, grad: torch.Tensor,
                                          margin: float = 0.0, wants: tuple[bool, bool] = (True, True),
                                          config: dict | None = None) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``(dx1, dx2)`` (N, D), contiguous in ``x1``'s/``x2``'s dtypes, of the per-sample losses for their gradient
    ``grad`` (N,); ``wants``: which of the two to compute (None for the other)."""
    _check(x1, x2, y)
    if grad.shape != x1.shape[:1]:
        raise ValueError(f"cosine_embedding_loss: grad must have shape ({x1.shape[0]},), got {tuple(grad.shape)}")
    cfg = config_for(x1, config)
    a, b = x1.contiguous(), x2.contiguous()
    da = torch.empty_like(a) if wants[0] else None
    db = torch.empty_like(b) if wants[1] else None
    n_cols = a.shape[1]
    if a.numel() and any(wants):
        _cosine_embedding_bwd_kernel[(a.shape[0],)](a, b, y.contiguous(), grad.contiguous(), a if da is None else da,
                                                    b if db is None else db, n_cols, float(margin), DX1=wants[0],
                                                    DX2=wants[1], BLOCK=row_block(cfg, n_cols),
                                                    num_warps=cfg["num_warps"])
    return da, db


def _cosine_embedding_loss_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x1, x2, y, margin), (g,) = args, grads
    if g is None or not on_kernels(x1, x2):
        return None
    dx1, dx2 = cosine_embedding_loss_backward_launch(x1, x2, y, g, margin, (needs[0], needs[1]))
    return dx1, dx2, torch.zeros_like(y) if needs[2] else None, None


@zoo_custom_op("cudal1::cosine_embedding_loss", mutates_args=(), ref=cosine_embedding_loss_ref,
               fast_backward=_cosine_embedding_loss_backward)
def _cosine_embedding_loss_op(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, margin: float) -> torch.Tensor:
    if x1.is_cuda:
        return cosine_embedding_loss_launch(x1, x2, y, margin)
    return cosine_embedding_loss_ref(x1, x2, y, margin)


@_cosine_embedding_loss_op.register_fake
def _(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, margin: float) -> torch.Tensor:
    return x1.new_empty(x1.shape[:1])


def cosine_embedding_loss(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, margin: float = 0.0
                          ) -> torch.Tensor:
    """Per-sample cosine embedding loss of ``x1``, ``x2`` (N, D) with labels ``y`` (N,) -> (N,)
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.cosine_embedding_loss``."""
    _check(x1, x2, y)
    return call("cosine_embedding_loss", x1, x2, y, float(margin))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_cosine_embedding_loss_kernel", {
    "x1_ptr": "*fp32", "x2_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32",
    "margin": "fp32"}),
                  TritonKernel("_cosine_embedding_bwd_kernel", {
                      "x1_ptr": "*bf16", "x2_ptr": "*bf16", "y_ptr": "*i64", "g_ptr": "*bf16", "dx1_ptr": "*bf16",
                      "dx2_ptr": "*bf16", "n_cols": "i32", "margin": "fp32"}, constexprs={"DX1": True, "DX2": True})]
