"""2-D max pooling, as ``torch.nn.functional.max_pool2d`` (floor mode, no indices): each output is the
maximum of its KH x KW window; padding is -inf; a NaN in the window gives NaN (as PyTorch).

Shapes: ``x`` (N, C, H, W) or (C, H, W), float32; output (..., OH, OW) float32 with
``O = (I + 2 * padding - kernel_size) // stride + 1`` per dimension (floor mode, no dilation). Memory-bound:
one read of ``x`` and one write of the output (4*(N*C*H*W + N*C*OH*OW) bytes). Overlapping windows
(stride < kernel) re-read inputs from L1/L2, not DRAM.
Kernel: :mod:`._pool` (one program per output tile, window taps unrolled).

Backward (CUDA): :mod:`._pool_backward`'s gather kernel: each input element sums ``dy`` of the windows whose
argmax it is, the argmax recomputed from ``x`` with PyTorch's tie and NaN rule (first maximum, last NaN); no
atomics, deterministic. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._pool import POOL_SIGNATURE, _pool_kernel, pool_launch  # noqa: F401  (_pool_kernel: TRITON_KERNELS)
from ._pool_backward import CONFIGS as POOL_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._pool_backward import kernels, max_pool2d_backward_launch

__all__ = ["CONFIGS", "max_pool2d", "max_pool2d_launch", "max_pool2d_ref"]

CONFIGS = {  # sm90 measured on an H100 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)
    "sm80": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm86": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm89": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm90": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
}
check_table(CONFIGS, "max_pool2d")


def max_pool2d_ref(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int]) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.max_pool2d(x, kernel_size, stride, padding)


def max_pool2d_launch(x: torch.Tensor, kernel_size, stride=None, padding=0,
                      config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel (``stride`` None: the kernel size, as PyTorch)."""
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    return pool_launch(x, 2, kernel_size, stride, padding, True, True, cfg)


def _max_pool2d_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    x, kernel_size, stride, padding = args
    (dy,) = grads
    if not on_kernels(x):
        return None
    if dy is None or not needs[0]:
        return None, None, None, None
    dx, _ = max_pool2d_backward_launch(x, dy, kernel_size, stride, padding)
    return dx, None, None, None


@zoo_custom_op("cudal1::max_pool2d", mutates_args=(), ref=max_pool2d_ref, fast_backward=_max_pool2d_backward)
def _max_pool2d_op(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int]
             ) -> torch.Tensor:
    if x.is_cuda:
        return max_pool2d_launch(x, kernel_size, stride, padding)
    return max_pool2d_ref(x, kernel_size, stride, padding)


@_max_pool2d_op.register_fake
def _(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int]) -> torch.Tensor:
    return max_pool2d_ref(x, kernel_size, stride, padding)


def _ints(v: int | list[int] | tuple[int, ...]) -> list[int]:
    return [v] * 2 if isinstance(v, int) else list(v)


def max_pool2d(x: torch.Tensor, kernel_size: int | list[int], stride: int | list[int] | None = None,
               padding: int | list[int] = 0) -> torch.Tensor:
    """Max pooling over the last two dims of ``x`` (N, C, H, W) or (C, H, W), float32 (Triton on CUDA, the reference on CPU);
    ``stride`` None means the kernel size. ``torch.ops.cudal1.max_pool2d``."""
    stride = kernel_size if stride is None else stride
    return call("max_pool2d", x, _ints(kernel_size), _ints(stride), _ints(padding))


#: for ``python -m cudal1.kernelzoo.compile_targets`` (compiled with the task's window; the backward from
#: :mod:`._pool_backward`)
_WINDOW = {"KH": 3, "KW": 3, "SH": 2, "SW": 2, "PH": 1, "PW": 1}
TRITON_KERNELS = [TritonKernel("_pool_kernel", POOL_SIGNATURE, constexprs={"KD": 1, "SD": 1, "PD": 0, **_WINDOW,
                                                                           "IS_MAX": True, "COUNT_PAD": True}),
                  *kernels(max2d={**_WINDOW, "RELU": False, "HAS_B": False, "NEED_DX": True, "NEED_DB": False})]
