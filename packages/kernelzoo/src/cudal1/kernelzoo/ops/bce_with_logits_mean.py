"""Per-row mean of the binary cross-entropy with logits, with an optional bias added to the logits::

    z = logits + bias
    y[r] = mean_j( max(z, 0) - z * t + log(1 + exp(-|z|)) )[r, j]

(= ``F.binary_cross_entropy_with_logits(z, t, reduction="none").mean(-1)``). Shapes: ``logits``,
``targets`` (..., N); ``bias`` (N,) or None; float32, fp32 accumulation; output (...,). Memory traffic:
one read of logits and targets, a row-sized write, against about ten elementwise passes and a reduction
in eager PyTorch. With a GEMM's output as ``logits`` and the linear layer's bias as ``bias``, a linear +
BCE head costs the GEMM plus one read.

Backward (CUDA, fp32/bf16/fp16; :mod:`._loss_backward`): one elementwise pass writes ``dlogits = g[r] / N *
(sigmoid(z) - t)``, where wanted ``dtargets = -g[r] / N * z`` (torch's target gradient), and ``dbias``, the
column sums of ``dlogits`` kept in fp32 registers per band of rows (``g`` read from the device, no host sync).
The reference's vector-Jacobian product elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._loss_backward import CONFIGS as LOSS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._loss_backward import backward_kernel, pointwise_loss_backward_launch

__all__ = ["CONFIGS", "bce_with_logits_mean", "bce_with_logits_mean_launch", "bce_with_logits_mean_ref"]

#: TILE: elements (rows x BLOCK_N) per program and loop step; BLOCK_N at most MAX_BLOCK_N
CONFIGS = {
    "sm80": {"TILE": 4096, "MAX_BLOCK_N": 4096, "num_warps": 8},
    "sm86": {"TILE": 4096, "MAX_BLOCK_N": 2048, "num_warps": 8},
    "sm89": {"TILE": 4096, "MAX_BLOCK_N": 2048, "num_warps": 8},
    "sm90": {"TILE": 4096, "MAX_BLOCK_N": 4096, "num_warps": 8},
}
check_table(CONFIGS, "bce_with_logits_mean")


def bce_with_logits_mean_ref(logits: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """PyTorch reference."""
    z = logits if bias is None else logits + bias
    return torch.nn.functional.binary_cross_entropy_with_logits(z, targets, reduction="none").mean(dim=-1)


@triton.jit
def _bce_mean_kernel(z_ptr, t_ptr, b_ptr, y_ptr, n_rows, n_cols, HAS_B: tl.constexpr, ROWS: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        cmask = cols < n_cols
        mask = rmask[:, None] & cmask[None, :]
        offs = rows[:, None] * n_cols + cols[None, :]
        z = tl.load(z_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        if HAS_B:
            z += tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
        loss = tl.maximum(z, 0.0) - z * t + tl.log(1.0 + tl.exp(-tl.abs(z)))
        acc += tl.where(mask, loss, 0.0)
    tl.store(y_ptr + rows, (tl.sum(acc, 1) / n_cols).to(y_ptr.dtype.element_ty), mask=rmask)


def _check(logits: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None) -> None:
    if logits.shape != targets.shape or logits.dim() < 1:
        raise ValueError(f"logits and targets must have one shape (..., N), got {tuple(logits.shape)} and "
                         f"{tuple(targets.shape)}")
    if bias is not None and bias.shape != (logits.shape[-1],):
        raise ValueError(f"bias must have shape ({logits.shape[-1]},), got {tuple(bias.shape)}")


def bce_with_logits_mean_launch(logits: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None,
                                config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; returns the (...,) per-row means."""
    _check(logits, targets, bias)
    cfg = config or pick(CONFIGS, logits.device if logits.is_cuda else None)
    z, t = logits.contiguous(), targets.contiguous()
    n = z.shape[-1]
    y = torch.empty(z.shape[:-1], device=z.device, dtype=z.dtype)
    n_rows = y.numel()
    if n_rows:
        if n == 0:
            return y.fill_(float("nan"))
        bn = min(triton.next_power_of_2(n), cfg["MAX_BLOCK_N"])
        rows = max(1, cfg["TILE"] // bn)
        _bce_mean_kernel[(triton.cdiv(n_rows, rows),)](z, t, bias.contiguous() if bias is not None else z, y,
                                                       n_rows, n, HAS_B=bias is not None, ROWS=rows, BLOCK_N=bn,
                                                       num_warps=cfg["num_warps"])
    return y


def _bce_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (logits, targets, bias), (g,) = args, grads
    if g is None or not on_kernels(logits, targets, *([] if bias is None else [bias])):
        return None
    return pointwise_loss_backward_launch("bce", logits, targets, g, bias=bias,
                                          wants=(needs[0], needs[1], bias is not None and needs[2]))


@zoo_custom_op("cudal1::bce_with_logits_mean", mutates_args=(), ref=bce_with_logits_mean_ref,
               fast_backward=_bce_backward)
def _bce_op(logits: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    if logits.is_cuda:
        return bce_with_logits_mean_launch(logits, targets, bias)
    return bce_with_logits_mean_ref(logits, targets, bias).contiguous()


@_bce_op.register_fake
def _(logits, targets, bias):
    return logits.new_empty(logits.shape[:-1])


def bce_with_logits_mean(logits: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """Per-row mean BCE-with-logits of float32 ``logits + bias`` against ``targets`` (both (..., N); ``bias``
    (N,) or None); output (...,). Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.bce_with_logits_mean``."""
    _check(logits, targets, bias)
    return call("bce_with_logits_mean", logits, targets, bias)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_bce_mean_kernel", {"z_ptr": "*fp32", "t_ptr": "*fp32", "b_ptr": "*fp32",
                                                    "y_ptr": "*fp32", "n_rows": "i64", "n_cols": "i32"},
                               constexprs={"HAS_B": True, "ROWS": 2, "BLOCK_N": 2048}),
                  backward_kernel("bce", bias=True)]
