"""SiLU (swish): ``y = x * sigmoid(x)`` elementwise, as ``torch.nn.functional.silu``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; computed in fp32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..kernel_specs import TritonKernel
from ._elementwise import CONFIGS, unary_op

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


#: ``silu_launch(x, config=None)`` runs the Triton kernel (any device Triton runs on, the interpreter
#: included); ``silu(x)`` is the public op: Triton on CUDA, the reference on CPU, traceable by
#: ``torch.compile`` as ``torch.ops.cudal1.silu``.
silu_launch, silu = unary_op("silu", _silu_kernel, silu_ref)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_silu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})]
