"""Triton when it is installed, a stand-in when it is not (macOS, Windows, a CPU-only install), so that
``import cudal1.kernelzoo`` and every op's CPU fallback work everywhere.

Without Triton, ``@triton.jit`` kernels are still defined (their bodies never run at import) but launching one
raises :class:`TritonUnavailableError` saying what to install; ``triton.cdiv`` and ``triton.next_power_of_2``
keep working (launch-config code uses them). ``HAVE_TRITON`` says which one is in use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["HAVE_TRITON", "TritonUnavailableError", "tl", "triton"]

_HINT = ("Triton is not installed, so the zoo's GPU kernels cannot run: pip install triton (Linux), or keep the "
         "tensors on the CPU, where every op runs its PyTorch reference")


class TritonUnavailableError(RuntimeError):
    """A Triton kernel was launched where Triton is not installed."""


class _Kernel:
    """A ``@triton.jit`` function without Triton: defined, not launchable."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def launch(*args: Any, **kwargs: Any) -> Any:
            raise TritonUnavailableError(f"{self.__name__}: {_HINT}")

        return launch

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TritonUnavailableError(f"{self.__name__}: {_HINT}")


class _MissingTriton:
    """The parts of the ``triton`` module the zoo uses outside kernel bodies."""

    __version__ = "unavailable"

    @staticmethod
    def jit(fn: Callable[..., Any] | None = None, **_: Any) -> Any:
        return _Kernel(fn) if fn is not None else _Kernel

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def next_power_of_2(n: int) -> int:
        return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()

    def __getattr__(self, name: str) -> Any:
        raise TritonUnavailableError(f"triton.{name}: {_HINT}")


class _MissingLanguage:
    """``triton.language`` without Triton: names resolve (annotations, defaults), nothing computes."""

    def __getattr__(self, name: str) -> Any:
        return f"tl.{name}"


try:
    import triton
    import triton.language as tl

    HAVE_TRITON = True
except ImportError:
    triton = _MissingTriton()  # type: ignore[assignment]
    tl = _MissingLanguage()  # type: ignore[assignment]
    HAVE_TRITON = False
