"""Fused residual add + RMS norm, a pre-norm transformer block's step between sublayers::

    h = x + residual                                   (the updated residual stream, in the input dtype)
    y = h / sqrt(mean(h^2) + eps) * weight             (the next sublayer's input)

Shapes: ``x``, ``residual`` (..., N), same shape and dtype; ``weight`` (N,); fp32, bf16, fp16 (statistics in
fp32; fp64 inputs run the reference); outputs ``(y, h)`` like ``x``. One program per row: the first pass reads
``x`` and ``residual`` once, writes ``h`` and accumulates the sum of squares of ``h`` as stored (rounded to the
input dtype, as the unfused ``x + residual`` would be); the second pass reads ``h`` back and writes ``y`` (eager:
an add kernel and a norm kernel, with ``h`` written and read in between).

Backward: only ``h`` and ``weight`` are saved (not ``x`` and ``residual``); ``dx = dresidual = dh_out +
rms_norm'(h)^T dy`` comes from the shared row-norm backward kernel with ``dh_out`` added in (one read of ``h``,
``dy``, ``dh_out``, one write), the same formula through PyTorch's autograd where the kernel does not apply.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import backward_kernel, norm_backward_launch, takes

__all__ = ["CONFIGS", "add_rms_norm", "add_rms_norm_launch", "add_rms_norm_ref"]

#: BLOCK columns per step, num_warps (untuned: rms_norm's Triton table)
CONFIGS = {
    "sm80": {"BLOCK": 1024, "num_warps": 4},
    "sm86": {"BLOCK": 1024, "num_warps": 4},
    "sm89": {"BLOCK": 1024, "num_warps": 4},
    "sm90": {"BLOCK": 2048, "num_warps": 8},
}
check_table(CONFIGS, "add_rms_norm")


def add_rms_norm_ref(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                     eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """PyTorch reference: ``h = x + residual``, then the RMS norm of ``h`` in (at least) fp32, cast back."""
    h = x + residual
    hf = h.to(torch.promote_types(h.dtype, torch.float32))
    y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps) * weight.to(hf.dtype)
    return y.to(x.dtype), h


@triton.jit
def _add_rms_norm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        r = tl.load(r_ptr + base + cols, mask=mask, other=0.0)
        h = (x.to(tl.float32) + r.to(tl.float32)).to(h_ptr.dtype.element_ty)
        tl.store(h_ptr + base + cols, h, mask=mask)
        hf = h.to(tl.float32)
        acc += hf * hf
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(h_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (h * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor) -> None:
    if residual.shape != x.shape or residual.dtype != x.dtype:
        raise ValueError(f"residual must match x: got {tuple(residual.shape)} {residual.dtype} for "
                         f"{tuple(x.shape)} {x.dtype}")
    if weight.shape != (x.shape[-1],):
        raise ValueError(f"weight must have shape ({x.shape[-1]},), got {tuple(weight.shape)}")


def add_rms_norm_launch(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
                        config: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the Triton kernel: ``(y, h)`` for ``x``, ``residual`` (..., N) and ``weight`` (N,)."""
    _check(x, residual, weight)
    n_cols = x.shape[-1]
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc, rc = x.contiguous(), residual.contiguous()
    y, h = torch.empty_like(xc), torch.empty_like(xc)
    if xc.numel():
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _add_rms_norm_kernel[(xc.numel() // n_cols,)](xc, rc, weight.contiguous(), y, h, n_cols, eps, BLOCK=block,
                                                     num_warps=cfg["num_warps"])
    return y, h


def _norm_of(h: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """The y of add_rms_norm_ref as a function of h (for the backward where the kernel does not apply)."""
    hf = h.to(torch.promote_types(h.dtype, torch.float32))
    return (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps) * weight.to(hf.dtype)).to(h.dtype)


def _setup(ctx, inputs, output) -> None:
    _x, _residual, weight, eps = inputs
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(output[1], weight)
    ctx.eps = eps


def _backward(ctx, dy: torch.Tensor | None, dh: torch.Tensor | None) -> tuple:
    h, weight = ctx.saved_tensors
    needs = ctx.needs_input_grad
    if dy is None:
        dy = torch.zeros_like(h)
    if takes(h, weight):
        d, dw, _ = norm_backward_launch(h, weight, dy, ctx.eps, rms=True, dh=dh)
    else:
        with torch.enable_grad():
            hg, wg = h.detach().requires_grad_(True), weight.detach().requires_grad_(True)
            d, dw = torch.autograd.grad(_norm_of(hg, wg, ctx.eps), (hg, wg), dy)
        if dh is not None:
            d = d + dh
    return d if needs[0] else None, d if needs[1] else None, dw if needs[2] else None, None


@zoo_custom_op("cudal1::add_rms_norm", mutates_args=(), ref=add_rms_norm_ref, backward=_backward,
               setup_context=_setup)
def _add_rms_norm_op(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                     eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    if not x.is_cuda:
        return add_rms_norm_ref(x, residual, weight, eps)
    return add_rms_norm_launch(x, residual, weight, eps)


@_add_rms_norm_op.register_fake
def _(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(x, memory_format=torch.contiguous_format))


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                 eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rms_norm(x + residual) * weight, x + residual)`` in one kernel on CUDA (the reference on CPU);
    ``torch.ops.cudal1.add_rms_norm``."""
    _check(x, residual, weight)
    return call("add_rms_norm", x, residual, weight, float(eps))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_add_rms_norm_kernel", {"x_ptr": "*bf16", "r_ptr": "*bf16", "w_ptr": "*bf16",
                                                         "y_ptr": "*bf16", "h_ptr": "*bf16", "n_cols": "i32",
                                                         "eps": "fp32"}),
                  backward_kernel(rms=True, dh=True)]
