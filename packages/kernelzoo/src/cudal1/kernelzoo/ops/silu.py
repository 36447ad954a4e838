"""SiLU (swish): ``y = x * sigmoid(x)`` elementwise, as ``torch.nn.functional.silu``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; computed in fp32.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ._activation_backward import fast_backward, kernels
from ._elementwise import launch_unary_cuda, op_configs, unary_cuda_source, unary_op

__all__ = ["CONFIGS", "CUDA_SOURCES", "silu", "silu_launch", "silu_launch_cuda", "silu_ref"]

#: the shared elementwise table, with this op's default backend per family ("triton" or "cuda")
CONFIGS = op_configs(backend="triton")


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


_CUDA = unary_cuda_source("silu", "return v / (1.0f + expf(-v));")


def silu_launch_cuda(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel (float32 CUDA tensors; needs CuPy)."""
    return launch_unary_cuda(_CUDA, x, config, table=CONFIGS)


#: ``silu_launch(x, config=None)`` runs the Triton kernel (any device Triton runs on, the interpreter
#: included), ``silu_launch_cuda(x, config=None)`` the CUDA C one; ``silu(x)`` is the public op: the
#: family's backend on CUDA (cudal1.kernelzoo.cuda_jit), the reference on CPU, traceable by
#: ``torch.compile`` as ``torch.ops.cudal1.silu``.
silu_launch, silu = unary_op("silu", _silu_kernel, silu_ref, cuda_launch=silu_launch_cuda, table=CONFIGS,
                             fast_backward=fast_backward("silu"))

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_silu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})] + kernels("silu")
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
