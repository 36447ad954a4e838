"""Launcher of the elementwise ops that take float parameters (elu's alpha, leaky_relu's negative_slope,
softplus's beta and threshold): ``kernel(x_ptr, y_ptr, n, *scalars, BLOCK)``, one program per BLOCK
elements, 64-bit offsets, any shape (flattened contiguous view). Launch configs are the shared elementwise
table of :mod:`._elementwise` (same memory-bound access pattern)."""

from __future__ import annotations

from typing import Any

import torch

from .._triton import triton
from ..arch import pick
from ._elementwise import CONFIGS, elementwise_config

__all__ = ["CONFIGS", "launch_unary_scalars", "tuned_unary_scalars"]


def launch_unary_scalars(kernel: Any, x: torch.Tensor, scalars: tuple[float, ...],
                         config: dict | None = None) -> torch.Tensor:
    """``y = f(x; *scalars)``; output contiguous, same shape and dtype as ``x``. Scalars are passed as fp32
    kernel arguments (``float()`` first, so an int such as ``alpha=1`` is not specialised as a constant)."""
    if not x.is_floating_point():
        raise TypeError(f"expected a floating-point tensor, got {x.dtype}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n = xc.numel()
    if n:
        kernel[(triton.cdiv(n, cfg["BLOCK"]),)](xc, y, n, *(float(s) for s in scalars), BLOCK=cfg["BLOCK"],
                                                num_warps=cfg["num_warps"])
    return y


def tuned_unary_scalars(name: str, kernel: Any, x: torch.Tensor, scalars: tuple[float, ...]) -> torch.Tensor:
    """:func:`launch_unary_scalars` on a CUDA tensor with the config
    :func:`~._elementwise.elementwise_config` picks for op ``name`` (autotuned, or the family's entry)."""

    def run(cfg: Any) -> torch.Tensor:
        return launch_unary_scalars(kernel, x, scalars, cfg)

    return run(elementwise_config(name, x, CONFIGS, run, has_cuda=False))
