"""GELU (exact, erf form): ``y = x * 0.5 * (1 + erf(x / sqrt(2)))`` elementwise, as ``torch.nn.functional.gelu``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element; computed in fp32.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ._activation_backward import fast_backward, kernels
from ._elementwise import launch_unary_cuda, op_configs, unary_cuda_source, unary_op

__all__ = ["CONFIGS", "CUDA_SOURCES", "gelu", "gelu_launch", "gelu_launch_cuda", "gelu_ref"]

#: the shared elementwise table, with this op's default backend per family ("triton" or "cuda")
CONFIGS = op_configs(backend="triton")


def gelu_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.gelu(x)


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


_CUDA = unary_cuda_source("gelu", "return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));")


def gelu_launch_cuda(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel (float32 CUDA tensors; needs CuPy)."""
    return launch_unary_cuda(_CUDA, x, config, table=CONFIGS)


#: ``gelu_launch(x, config=None)`` runs the Triton kernel (any device Triton runs on, the interpreter
#: included), ``gelu_launch_cuda(x, config=None)`` the CUDA C one; ``gelu(x)`` is the public op: the
#: family's backend on CUDA (cudal1.kernelzoo.cuda_jit), the reference on CPU, traceable by
#: ``torch.compile`` as ``torch.ops.cudal1.gelu``.
gelu_launch, gelu = unary_op("gelu", _gelu_kernel, gelu_ref, cuda_launch=gelu_launch_cuda, table=CONFIGS,
                             fast_backward=fast_backward("gelu"))

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_gelu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})] + kernels("gelu")
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
