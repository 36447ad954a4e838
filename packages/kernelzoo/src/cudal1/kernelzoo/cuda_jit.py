"""Raw CUDA C kernels of the zoo: compiled by NVRTC (through CuPy) at first use, cached, launched on
PyTorch's current stream; and the choice between the Triton and the CUDA C implementation of an op.

Compilation: :func:`get_kernel` builds a ``cupy.RawModule`` from a
:class:`~cudal1.kernelzoo.kernel_specs.CudaSource` for the device at hand (CuPy compiles for that
device's architecture and keeps the binary in ``~/.cupy/kernel_cache``), once per (source, device,
options) in this process. Launch: :func:`launch` runs a kernel on ``torch.cuda.current_stream()`` of the
tensors' device, with tensors passed as raw device pointers (``numpy.uint64``, 8 bytes, matching a
``float*`` parameter) and scalars as the numpy type of the C parameter (``numpy.int32`` for ``int``,
``numpy.int64`` for ``long long``, ``numpy.float32`` for ``float``); Python ints and floats are refused,
since CuPy would pass them as 8-byte ``long long`` / ``double`` whatever the kernel declares.

CuPy is optional: ``import cudal1.kernelzoo`` works without it; asking for a CUDA C kernel without it
raises :class:`CudaBackendUnavailable` naming the extra to install (``cudal1-kernelzoo[cuda13]`` or
``[cuda12]``), and the public ops then use Triton.

Backend choice: each op's per-family ``CONFIGS`` entry has ``"backend": "triton"`` or ``"cuda"`` (the
default for that architecture). The environment variable ``CUDAL1_BACKEND=triton|cuda`` overrides it for
every op that has CUDA C. An op uses CUDA C only where it has it for the input (float32 CUDA tensors) and
CuPy imports; otherwise Triton, silently. ``<op>_launch`` (Triton) and ``<op>_launch_cuda`` (CUDA C) run one
implementation whatever the choice, for tests and benchmarks.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import torch

from .arch import pick
from .kernel_specs import CudaSource

__all__ = ["BACKENDS", "BACKEND_ENV", "DEFAULT_OPTIONS", "SHARED_MEM_DEFAULT", "CudaBackendUnavailable", "DirectKernel",
           "allow_shared_memory", "cache_key", "choose_backend", "direct_kernel", "run", "LAUNCH_ENV",
           "cupy_available", "f32", "get_kernel", "i32", "i64", "kernel_args", "launch", "require_cupy",
           "requested_backend", "use_cuda"]

BACKEND_ENV = "CUDAL1_BACKEND"
BACKENDS = ("triton", "cuda")
#: NVRTC options of every zoo source (the nvcc compile test uses the same language level)
DEFAULT_OPTIONS: tuple[str, ...] = ("-std=c++17",)
INSTALL_HINT = ("pip install 'cudal1-kernelzoo[cuda13]' (CUDA 13 driver) or 'cudal1-kernelzoo[cuda12]' "
                "(CUDA 12 driver)")


class CudaBackendUnavailable(RuntimeError):
    """A CUDA C kernel was asked for where it cannot run (no CuPy, or not a CUDA tensor)."""


@functools.lru_cache(maxsize=1)
def _import_cupy() -> ModuleType | None:
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def cupy_available() -> bool:
    """Whether CuPy imports (the result is cached; ``_import_cupy.cache_clear()`` forgets it)."""
    return _import_cupy() is not None


def require_cupy() -> ModuleType:
    """The ``cupy`` module, or :class:`CudaBackendUnavailable` saying which extra installs it."""
    cupy = _import_cupy()
    if cupy is None:
        raise CudaBackendUnavailable(f"the CUDA C kernels of cudal1.kernelzoo need CuPy, which is not installed: "
                                     f"{INSTALL_HINT}; or use the Triton kernels ({BACKEND_ENV}=triton)")
    return cupy


def requested_backend(table: Mapping[str, Mapping[str, Any]], device: torch.device | None = None) -> str:
    """``$CUDAL1_BACKEND`` if set (validated), else the ``"backend"`` of the device's family entry in
    ``table`` (``"triton"`` where the entry has none)."""
    forced = os.environ.get(BACKEND_ENV)
    choice = forced or pick(table, device).get("backend", "triton")
    if choice not in BACKENDS:
        origin = f"{BACKEND_ENV}={forced!r}" if forced else f"config backend {choice!r}"
        raise ValueError(f"{origin} is not one of {', '.join(BACKENDS)}")
    return choice


def choose_backend(table: Mapping[str, Mapping[str, Any]], device: torch.device | None = None, *,
                   has_cuda: bool = True) -> str:
    """The implementation an op runs: the requested backend, except ``"triton"`` where the op has no CUDA C
    for this input (``has_cuda=False``) or CuPy is missing."""
    if requested_backend(table, device) == "cuda" and has_cuda and cupy_available():
        return "cuda"
    return "triton"


def use_cuda(table: Mapping[str, Mapping[str, Any]], *tensors: torch.Tensor) -> bool:
    """Whether a public op runs its CUDA C kernel on ``tensors`` (its CUDA C takes float32 CUDA tensors)."""
    ok = all(t.is_cuda and t.dtype == torch.float32 for t in tensors)
    return choose_backend(table, tensors[0].device, has_cuda=ok) == "cuda"


def cache_key(source: CudaSource, device_index: int, options: Sequence[str] = DEFAULT_OPTIONS) -> tuple:
    """In-process cache key of a compiled module: the source's name and a hash of its code (an edited
    source is a new key), the device index and the NVRTC options."""
    digest = hashlib.sha256(source.code.encode()).hexdigest()[:16]
    return (source.name, digest, int(device_index), tuple(options))


_MODULES: dict[tuple, Any] = {}
_KERNELS: dict[tuple, Any] = {}
_STREAMS: dict[tuple[int, int], Any] = {}


class _StreamHandle:
    """A raw ``cudaStream_t`` (int) speaking the CUDA stream protocol (``__cuda_stream__``), for CuPy."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)


def _external_stream(cupy: ModuleType, handle: int, device_index: int) -> Any:
    """A CuPy stream object for PyTorch's stream ``handle`` on ``device_index``: ``Stream.from_external``
    where CuPy has it (``ExternalStream`` is deprecated there), ``ExternalStream`` on older CuPy."""
    from_external = getattr(getattr(cupy.cuda, "Stream", None), "from_external", None)
    if from_external is not None:
        with cupy.cuda.Device(device_index):
            return from_external(_StreamHandle(handle))
    return cupy.cuda.ExternalStream(handle, device_index)


def get_kernel(source: CudaSource, kernel: str, device_index: int,
               options: Sequence[str] = DEFAULT_OPTIONS) -> Any:
    """The ``cupy.RawKernel`` ``kernel`` of ``source`` for CUDA device ``device_index``, compiled by NVRTC on
    first use (for that device's architecture) and cached per :func:`cache_key`."""
    if kernel not in source.kernels:
        raise KeyError(f"CUDA source {source.name!r} declares kernels {source.kernels}, not {kernel!r}")
    cupy = require_cupy()
    key = cache_key(source, device_index, options)
    fn = _KERNELS.get((key, kernel))
    if fn is None:
        module = _MODULES.get(key)
        if module is None:
            module = _MODULES[key] = cupy.RawModule(code=source.code, options=tuple(options))
        with cupy.cuda.Device(device_index):
            fn = module.get_function(kernel)  # compiles the module (all its kernels) here, once
        _KERNELS[(key, kernel)] = fn
    return fn


def i32(v: int) -> Any:
    """A kernel argument for a C ``int`` parameter."""
    import numpy as np

    return np.int32(v)


def i64(v: int) -> Any:
    """A kernel argument for a C ``long long`` parameter."""
    import numpy as np

    return np.int64(v)


def f32(v: float) -> Any:
    """A kernel argument for a C ``float`` parameter."""
    import numpy as np

    return np.float32(v)


def kernel_args(args: Sequence[Any]) -> tuple:
    """Kernel arguments as CuPy passes them: tensors as ``numpy.uint64`` device pointers, numpy scalars
    unchanged; Python numbers are refused (their C type would be guessed)."""
    import numpy as np

    out = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            out.append(np.uint64(a.data_ptr()))
        elif isinstance(a, np.generic):
            out.append(a)
        else:
            raise TypeError(f"kernel argument {i} is a {type(a).__name__}: pass tensors, or numpy scalars of the "
                            f"C parameter's type (np.int32 for int, np.int64 for long long, np.float32 for float)")
    return tuple(out)


def launch(source: CudaSource, kernel: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any],
           device: torch.device, shared_mem: int = 0) -> None:
    """Run ``kernel`` of ``source`` on ``device``'s current PyTorch stream with ``args`` (see
    :func:`kernel_args`); raises :class:`CudaBackendUnavailable` without CuPy or for a non-CUDA device."""
    cupy = require_cupy()
    if device.type != "cuda":
        raise CudaBackendUnavailable(f"CUDA C kernel {kernel} needs CUDA tensors, got device {device}; "
                                     f"use the op's Triton launcher or its public function on CPU")
    index = device.index if device.index is not None else torch.cuda.current_device()
    fn = get_kernel(source, kernel, index)
    cargs = kernel_args(args)
    torch_stream = torch.cuda.current_stream(index).cuda_stream
    stream = _STREAMS.get((index, torch_stream))
    if stream is None:
        stream = _STREAMS[(index, torch_stream)] = _external_stream(cupy, torch_stream, index)
    with cupy.cuda.Device(index), stream:
        fn(tuple(grid), tuple(block), cargs, shared_mem=shared_mem)


_C_TYPES = {"p": "c_uint64", "i": "c_int32", "l": "c_int64", "f": "c_float"}


@functools.lru_cache(maxsize=1)
def _libcuda() -> Any:
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuLaunchKernel.restype = ctypes.c_int
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    return lib


class DirectKernel:
    """One kernel of a :class:`CudaSource` launched through the driver's ``cuLaunchKernel`` (ctypes) on PyTorch's
    current stream, skipping CuPy's launch path in :func:`launch` (device and stream context managers, argument
    conversion). With the harness's timing (benchmarks/results/
    2026-11-27-kernelbench-v0-level1-h100/call1-probe-streaming-pool.txt), a one-launch op on 4096 values took
    less time a call this way than through CuPy's path, though more than one eager PyTorch op.

    ``signature``: one letter per kernel parameter, ``p`` pointer (pass a tensor), ``i`` int, ``l`` long long,
    ``f`` float (pass Python numbers). Compiled through :func:`get_kernel` (CuPy) for ``device_index``; call
    ``handle(grid, block, *args, shared_mem=0)``; an ``i`` / ``l`` value outside its C type wraps (ctypes), so
    callers pass sizes they have checked. The launch runs with ``device_index`` as PyTorch's current device (the
    module lives in that device's primary context). The parameter buffers are reused across calls (the driver
    copies them at launch), so one handle must not be called from two threads at once. Linux only
    (``libcuda.so.1``).
    """

    def __init__(self, source: CudaSource, kernel: str, device_index: int, signature: str) -> None:
        import ctypes

        if set(signature) - set(_C_TYPES):
            raise ValueError(f"signature {signature!r}: use p (pointer), i (int), l (long long), f (float)")
        fn = get_kernel(source, kernel, device_index)
        func = getattr(fn, "kernel", fn)  # RawKernel -> cupy.cuda.function.Function
        self.function = int(func.ptr)
        self.device_index = int(device_index)
        self.signature = signature
        self._slots = [getattr(ctypes, _C_TYPES[c])() for c in signature]
        self._params = (ctypes.c_void_p * len(signature))(*[ctypes.addressof(s) for s in self._slots])
        self._lib = _libcuda()

    def __call__(self, grid: Sequence[int], block: Sequence[int], *args: Any, shared_mem: int = 0) -> None:
        if len(args) != len(self._slots):
            raise TypeError(f"kernel takes {len(self._slots)} arguments ({self.signature}), got {len(args)}")
        for slot, kind, a in zip(self._slots, self.signature, args, strict=True):
            slot.value = a.data_ptr() if kind == "p" else a
        g = tuple(grid) + (1,) * (3 - len(grid))
        b = tuple(block) + (1,) * (3 - len(block))
        stream = torch._C._cuda_getCurrentRawStream(self.device_index)
        args = (self.function, g[0], g[1], g[2], b[0], b[1], b[2], shared_mem, stream, self._params, None)
        if torch.cuda.current_device() != self.device_index:
            with torch.cuda.device(self.device_index):
                err = self._lib.cuLaunchKernel(*args)
        else:
            err = self._lib.cuLaunchKernel(*args)
        if err:
            raise RuntimeError(f"cuLaunchKernel failed with CUresult {err} (grid {g}, block {b})")


_DIRECT: dict[tuple, DirectKernel] = {}


def direct_kernel(source: CudaSource, kernel: str, device: torch.device, signature: str) -> DirectKernel:
    """The cached :class:`DirectKernel` of ``kernel`` in ``source`` for ``device`` (CUDA)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (source.name, source.code, kernel, index, signature)
    handle = _DIRECT.get(key)
    if handle is None:
        handle = _DIRECT[key] = DirectKernel(source, kernel, index, signature)
    return handle


#: set to ``cupy`` to send :func:`run` through CuPy's launch path (:func:`launch`), for A/B timing
LAUNCH_ENV = "CUDAL1_CUDA_LAUNCH"


#: dynamic shared memory a kernel may take without raising its limit (CUDA's default)
SHARED_MEM_DEFAULT = 48 * 1024
_SHARED_LIMITS: dict[tuple, int] = {}


def allow_shared_memory(source: CudaSource, kernel: str, device: torch.device, nbytes: int) -> None:
    """Raise ``kernel``'s dynamic shared-memory limit on ``device`` to ``nbytes`` (a launch asking for more than
    :data:`SHARED_MEM_DEFAULT` fails without it); the attribute is set once per (source, kernel, device, size)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (source.name, source.code, kernel, index)
    if _SHARED_LIMITS.get(key, SHARED_MEM_DEFAULT) >= nbytes:
        return
    fn = get_kernel(source, kernel, index)
    if getattr(fn, "max_dynamic_shared_size_bytes", 0) < nbytes:
        fn.max_dynamic_shared_size_bytes = nbytes
    _SHARED_LIMITS[key] = nbytes


def run(source: CudaSource, kernel: str, grid: Sequence[int], block: Sequence[int], signature: str,
        args: Sequence[Any], device: torch.device, shared_mem: int = 0) -> None:
    """Launch ``kernel`` with Python arguments typed by ``signature`` (see :class:`DirectKernel`): through the
    driver directly, or through :func:`launch` when ``$CUDAL1_CUDA_LAUNCH=cupy``. More than
    :data:`SHARED_MEM_DEFAULT` bytes of ``shared_mem`` raise the kernel's limit first (:func:`allow_shared_memory`)."""
    if shared_mem > SHARED_MEM_DEFAULT:
        allow_shared_memory(source, kernel, device, shared_mem)
    if os.environ.get(LAUNCH_ENV) == "cupy":
        conv = {"p": lambda a: a, "i": i32, "l": i64, "f": f32}
        launch(source, kernel, tuple(grid), tuple(block), [conv[c](a) for c, a in zip(signature, args, strict=True)],
               device, shared_mem)
        return
    direct_kernel(source, kernel, device, signature)(grid, block, *args, shared_mem=shared_mem)
