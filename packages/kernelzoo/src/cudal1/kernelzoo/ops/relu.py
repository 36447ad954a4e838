"""ReLU: ``y = max(x, 0)`` elementwise.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; the kernel reads 16 bytes per thread per step where the config allows.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._elementwise import CONFIGS, launch_unary

__all__ = ["CONFIGS", "relu", "relu_launch", "relu_ref"]


def relu_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.relu(x)


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x).to(x.dtype), mask=mask)  # NaN stays NaN, as in torch


def relu_launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel (any device Triton can run on, the interpreter included)."""
    return launch_unary(_relu_kernel, x, config)


@torch.library.custom_op("cudal1::relu", mutates_args=())
def _relu_op(x: torch.Tensor) -> torch.Tensor:
    return relu_launch(x) if x.is_cuda else relu_ref(x)


@_relu_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def relu(x: torch.Tensor) -> torch.Tensor:
    """ReLU of ``x`` (any shape, float dtype): Triton on CUDA, the reference on CPU. Traceable by
    ``torch.compile`` (registered as ``torch.ops.cudal1.relu``)."""
    return torch.ops.cudal1.relu(x)
