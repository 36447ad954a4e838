"""ReLU: ``y = max(x, 0)`` elementwise.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; the kernel reads 16 bytes per thread per step where the config allows.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ._activation_backward import fast_backward, kernels
from ._elementwise import launch_unary_cuda, op_configs, unary_cuda_source, unary_op

__all__ = ["CONFIGS", "CUDA_SOURCES", "relu", "relu_launch", "relu_launch_cuda", "relu_ref"]

#: the shared elementwise table, with this op's default backend per family ("triton" or "cuda")
CONFIGS = op_configs(backend="triton")


def relu_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.relu(x)


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x).to(x.dtype), mask=mask)  # NaN stays NaN, as in torch


_CUDA = unary_cuda_source("relu", "return v < 0.0f ? 0.0f : v;")  # NaN stays NaN, as in torch


def relu_launch_cuda(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel (float32 CUDA tensors; needs CuPy)."""
    return launch_unary_cuda(_CUDA, x, config, table=CONFIGS)


#: ``relu_launch(x, config=None)`` runs the Triton kernel (any device Triton runs on, the interpreter
#: included), ``relu_launch_cuda(x, config=None)`` the CUDA C one; ``relu(x)`` is the public op: the
#: family's backend on CUDA (cudal1.kernelzoo.cuda_jit), the reference on CPU, traceable by
#: ``torch.compile`` as ``torch.ops.cudal1.relu``.
relu_launch, relu = unary_op("relu", _relu_kernel, relu_ref, cuda_launch=relu_launch_cuda, table=CONFIGS,
                             fast_backward=fast_backward("relu"))

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_relu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})] + kernels("relu")
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
