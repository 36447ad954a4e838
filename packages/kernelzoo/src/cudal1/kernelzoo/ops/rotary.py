"""Rotary position embedding (RoPE), rotate-half form::

    y[..., s, :h] = x[..., s, :h] * cos[s] - x[..., s, h:] * sin[s]
    y[..., s, h:] = x[..., s, h:] * cos[s] + x[..., s, :h] * sin[s]         (h = D / 2)

i.e. ``x * cat(cos, cos) + cat(-x[..., h:], x[..., :h]) * cat(sin, sin)``. Shapes: ``x`` (..., S, D) with D
even; ``cos``, ``sin`` (S, D / 2) (the tables of ``positions x inv_freq``, built by the caller exactly as its
reference builds them); float32, fp32 math; output like ``x``. Memory traffic: one read and one write of
``x`` (the tables stay in cache), against about five passes in the written-out PyTorch form.

Backward (CUDA, fp32/bf16/fp16, tables without a gradient): the same kernel with ``BACKWARD`` set applies the
transposed rotation (``sin -> -sin``) to ``dy``: one read and one write. Gradients of ``cos``/``sin`` go through
the reference's VJP, as every case off the kernels.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "rotary", "rotary_launch", "rotary_ref", "rotary_tables"]

#: TILE: elements (rows x D) per program
CONFIGS = {
    "sm80": {"TILE": 4096, "num_warps": 8},
    "sm86": {"TILE": 4096, "num_warps": 8},
    "sm89": {"TILE": 4096, "num_warps": 8},
    "sm90": {"TILE": 8192, "num_warps": 8},
}
check_table(CONFIGS, "rotary")


def rotary_tables(seq: int, inv_freq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (seq, D / 2), of ``positions 0..seq-1 x inv_freq`` (D / 2,), as the usual RoPE code
    builds them (positions in float32, ``torch.outer``)."""
    freqs = torch.outer(torch.arange(seq, device=inv_freq.device, dtype=torch.float32), inv_freq)
    return freqs.cos(), freqs.sin()


def rotary_ref(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """PyTorch reference (rotate-half form)."""
    half = x.shape[-1] // 2
    c, s = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    return x * c + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * s


@triton.jit
def _rotary_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, n_rows, seq, half,
                   ROWS: tl.constexpr, BLOCK_H: tl.constexpr, BACKWARD: tl.constexpr = False):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_H)
    mask = (rows < n_rows)[:, None] & (cols < half)[None, :]
    base = rows[:, None] * (2 * half) + cols[None, :]
    tab = (rows % seq)[:, None] * half + cols[None, :]
    x1 = tl.load(x_ptr + base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + base + half, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + tab, mask=mask, other=0.0)
    s = tl.load(sin_ptr + tab, mask=mask, other=0.0)
    if BACKWARD:  # the transposed rotation: x = R(-theta) y
        s = -s
    tl.store(y_ptr + base, (x1 * c - x2 * s).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + base + half, (x2 * c + x1 * s).to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> None:
    if x.dim() < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must be (..., S, D) with D even, got shape {tuple(x.shape)}")
    want = (x.shape[-2], x.shape[-1] // 2)
    if cos.shape != want or sin.shape != want:
        raise ValueError(f"cos and sin must have shape (S, D/2) = {want}, got {tuple(cos.shape)} and {tuple(sin.shape)}")


def rotary_launch(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, config: dict | None = None,
                  backward: bool = False) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., S, D) with tables (S, D/2); returns a new contiguous tensor in ``x``'s
    dtype. ``backward=True``: ``x`` is the output gradient and the result the input's gradient (the transposed
    rotation)."""
    _check(x, cos, sin)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    d, seq = x.shape[-1], x.shape[-2]
    n_rows = xc.numel() // d if d else 0
    if n_rows:
        bh = triton.next_power_of_2(d // 2)
        rows = max(1, cfg["TILE"] // (2 * bh))
        _rotary_kernel[(triton.cdiv(n_rows, rows),)](xc, cos.contiguous().float(), sin.contiguous().float(), y,
                                                     n_rows, seq, d // 2, ROWS=rows, BLOCK_H=bh,
                                                     BACKWARD=backward, num_warps=cfg["num_warps"])
    return y


def _rotary_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, cos, sin), (dy,) = args, grads
    if dy is None or needs[1] or needs[2] or not on_kernels(x, dy, cos, sin):
        return None
    return rotary_launch(dy, cos, sin, backward=True).to(x.dtype), None, None


@zoo_custom_op("cudal1::rotary", mutates_args=(), ref=rotary_ref, fast_backward=_rotary_backward)
def _rotary_op(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return rotary_launch(x, cos, sin) if x.is_cuda else rotary_ref(x, cos, sin).contiguous()


@_rotary_op.register_fake
def _(x, cos, sin):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE (rotate-half) of float32 ``x`` (..., S, D) with ``cos``, ``sin`` (S, D/2) (see
    :func:`rotary_tables`); output like ``x``. Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.rotary``."""
    _check(x, cos, sin)
    return call("rotary", x, cos, sin)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_rotary_kernel", {"x_ptr": "*fp32", "cos_ptr": "*fp32", "sin_ptr": "*fp32",
                                                  "y_ptr": "*fp32", "n_rows": "i64", "seq": "i32", "half": "i32"},
                               constexprs={"ROWS": 64, "BLOCK_H": 64, "BACKWARD": False}),
                  TritonKernel("_rotary_kernel", {"x_ptr": "*bf16", "cos_ptr": "*fp32", "sin_ptr": "*fp32",
                                                  "y_ptr": "*bf16", "n_rows": "i64", "seq": "i32", "half": "i32"},
                               constexprs={"ROWS": 64, "BLOCK_H": 64, "BACKWARD": True})]
