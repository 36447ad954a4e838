"""3-D average pooling, as ``torch.nn.functional.avg_pool3d`` (floor mode): each output is the mean of its
KD x KH x KW window.

Shapes: ``x`` (N, C, D, H, W) or (C, D, H, W), float32; output (..., OD, OH, OW) float32 with
``O = (I + 2 * padding - kernel_size) // stride + 1`` per dimension (floor mode, no dilation). Memory-bound:
one read of ``x`` and one write of the output (4*(N*C*D*H*W + N*C*OD*OH*OW) bytes). Padding counts toward the divisor
(``count_include_pad=True``, PyTorch's default) unless ``count_include_pad=False``.
Kernel: :mod:`._pool` (one program per output tile, window taps unrolled).

Backward (CUDA): :mod:`._pool_backward`'s gather kernel, each input element's gradient summed from the
``dy / divisor`` of the windows containing it (no atomics, deterministic; ``x`` itself is not read); the
reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._pool import POOL_SIGNATURE, _pool_kernel, pool_launch  # noqa: F401  (_pool_kernel: TRITON_KERNELS)
from ._pool_backward import CONFIGS as POOL_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._pool_backward import avg_pool_backward, kernels

__all__ = ["CONFIGS", "avg_pool3d", "avg_pool3d_launch", "avg_pool3d_ref"]

CONFIGS = {  # sm90 measured on an H100 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)
    "sm80": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm86": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm89": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm90": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
}
check_table(CONFIGS, "avg_pool3d")


def avg_pool3d_ref(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int],
                   count_include_pad: bool = True) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.avg_pool3d(x, kernel_size, stride, padding, count_include_pad=count_include_pad)


def avg_pool3d_launch(x: torch.Tensor, kernel_size, stride=None, padding=0, count_include_pad: bool = True,
                      config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel (``stride`` None: the kernel size, as PyTorch)."""
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    return pool_launch(x, 3, kernel_size, stride, padding, False, count_include_pad, cfg)


_avg_pool3d_backward = avg_pool_backward(3)  # the op's backward kernel where it applies


@zoo_custom_op("cudal1::avg_pool3d", mutates_args=(), ref=avg_pool3d_ref, fast_backward=_avg_pool3d_backward)
def _avg_pool3d_op(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int], count_include_pad: bool = True
             ) -> torch.Tensor:
    if x.is_cuda:
        return avg_pool3d_launch(x, kernel_size, stride, padding, count_include_pad)
    return avg_pool3d_ref(x, kernel_size, stride, padding, count_include_pad)


@_avg_pool3d_op.register_fake
def _(x: torch.Tensor, kernel_size: list[int], stride: list[int], padding: list[int],
      count_include_pad: bool = True) -> torch.Tensor:
    return avg_pool3d_ref(x, kernel_size, stride, padding, count_include_pad)


def _ints(v: int | list[int] | tuple[int, ...]) -> list[int]:
    return [v] * 3 if isinstance(v, int) else list(v)


def avg_pool3d(x: torch.Tensor, kernel_size: int | list[int], stride: int | list[int] | None = None,
               padding: int | list[int] = 0, count_include_pad: bool = True) -> torch.Tensor:
    """Average pooling over the last three dims of ``x`` (N, C, D, H, W) or (C, D, H, W), float32 (Triton on CUDA, the reference on CPU);
    ``stride`` None means the kernel size. ``torch.ops.cudal1.avg_pool3d``."""
    stride = kernel_size if stride is None else stride
    return call("avg_pool3d", x, _ints(kernel_size), _ints(stride), _ints(padding), count_include_pad)


#: for ``python -m cudal1.kernelzoo.compile_targets`` (compiled with the task's window; the backward from
#: :mod:`._pool_backward`)
_WINDOW = {"KD": 3, "KH": 3, "KW": 3, "SD": 2, "SH": 2, "SW": 2, "PD": 1, "PH": 1, "PW": 1, "COUNT_PAD": True}
TRITON_KERNELS = [TritonKernel("_pool_kernel", POOL_SIGNATURE, constexprs={**_WINDOW, "IS_MAX": False}),
                  *kernels(avg=_WINDOW)]
