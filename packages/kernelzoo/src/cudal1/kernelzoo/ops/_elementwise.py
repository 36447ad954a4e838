"""Shared launcher, launch configs and registration of the elementwise ops (relu, gelu, silu): one program per BLOCK
elements, 64-bit offsets, any shape (flattened contiguous view)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import triton

from ..arch import check_table, pick

CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 8192, "num_warps": 16},
}
check_table(CONFIGS, "elementwise")


def launch_unary(kernel: Any, x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """``y = f(x)`` with ``kernel(x_ptr, y_ptr, n, BLOCK)``; output contiguous, same shape and dtype."""
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n = xc.numel()
    if n:
        kernel[(triton.cdiv(n, cfg["BLOCK"]),)](xc, y, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return y


def unary_op(name: str, kernel: Any, ref: Callable[[torch.Tensor], torch.Tensor]
             ) -> tuple[Callable[..., torch.Tensor], Callable[[torch.Tensor], torch.Tensor]]:
    """(launcher, public function) of an elementwise op: the launcher runs ``kernel`` through
    :func:`launch_unary`; the public function is ``torch.ops.cudal1.<name>``, registered here with a fake
    implementation for ``torch.compile`` and the reference as CPU fallback."""

    def launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
        return launch_unary(kernel, x, config)

    @torch.library.custom_op(f"cudal1::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return launch(x) if x.is_cuda else ref(x)

    @op.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    def public(x: torch.Tensor) -> torch.Tensor:
        return getattr(torch.ops.cudal1, name)(x)

    return launch, public
