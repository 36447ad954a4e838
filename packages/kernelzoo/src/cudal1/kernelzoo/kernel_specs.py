"""What an op module declares about its kernels, so that checks find every kernel without a list kept
elsewhere: ``TRITON_KERNELS`` (compiled for every family by :mod:`cudal1.kernelzoo.compile_targets`) and
``CUDA_SOURCES`` (raw CUDA C, compiled by NVRTC at first use and by nvcc for every family in the tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TritonKernel:
    """One Triton kernel of an op module, as the compile check sees it.

    kernel: attribute name of the ``@triton.jit`` function in the module.
    signature: Triton types of the non-constexpr arguments, e.g. ``{"x_ptr": "*fp32", "n": "i64"}``.
    constexprs: values of constexpr arguments that are not keys of the launch config.
    configs: attribute name of the module's per-family config table.
    defined_in: dotted name of the module that defines the kernel, when it is not the declaring module
        (ops sharing the kernels of a private module, e.g. ``_reduce``).
    """

    kernel: str
    signature: dict[str, str]
    constexprs: dict[str, Any] = field(default_factory=dict)
    configs: str = "CONFIGS"
    defined_in: str | None = None


@dataclass(frozen=True)
class CudaSource:
    """Raw CUDA C of an op module.

    name: short name, unique in the zoo (used for cache keys and file names).
    code: the translation unit; ``extern "C" __global__`` kernels, no host code, no includes beyond what
        NVRTC provides, so the same text compiles with NVRTC (at run time, through CuPy) and nvcc (in tests).
    kernels: the ``extern "C"`` kernel names it defines.
    """

    name: str
    code: str
    kernels: tuple[str, ...]
