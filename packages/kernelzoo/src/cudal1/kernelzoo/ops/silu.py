"""SiLU (swish): ``y = x * sigmoid(x)`` elementwise, as ``torch.nn.functional.silu``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; computed in fp32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._elementwise import CONFIGS, launch_unary

__all__ = ["CONFIGS", "silu", "silu_launch", "silu_ref"]


def silu_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.silu(x)


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu_launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel (any device Triton can run on, the interpreter included)."""
    return launch_unary(_silu_kernel, x, config)


@torch.library.custom_op("cudal1::silu", mutates_args=())
def _silu_op(x: torch.Tensor) -> torch.Tensor:
    return silu_launch(x) if x.is_cuda else silu_ref(x)


@_silu_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU of ``x`` (any shape, float dtype): Triton on CUDA, the reference on CPU. Traceable by
    ``torch.compile`` (registered as ``torch.ops.cudal1.silu``)."""
    return torch.ops.cudal1.silu(x)
