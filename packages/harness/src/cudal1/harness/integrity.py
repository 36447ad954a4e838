"""Runtime integrity checks inside the worker: what the candidate changed, and what it ran.

* :class:`IdentitySnapshot`: identities of the functions the harness and the reference rely on (torch,
  torch.nn.functional, torch.Tensor methods, torch.cuda, time, this package), taken before the candidate
  is imported and compared after it ran. Any change is ``monkeypatch`` (rejected); the originals are put
  back so the rest of the evaluation is not fooled.
* :func:`backend_flags` / :func:`restore_backend_flags`: TF32, reduced-precision reductions, cuDNN
  benchmark. A candidate that flips them is flagged (``reduced_precision`` for precision switches,
  ``library_flag`` for cuDNN benchmark); the reference always runs with the harness's settings.
* :class:`OpRecorder`: a TorchDispatchMode that records the dtypes every ATen op of one candidate call
  saw, so fp16/bf16 arithmetic inside an fp32 task is flagged even when the result stays in tolerance.
* :func:`kernel_names`: CUDA kernels one call launched (torch.profiler); (the parent tells the candidate's own
  from library kernels: :func:`cudal1.harness.static_checks.classify_kernels`).
* threads alive and modules in training mode after the candidate ran.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .novelty import SIGNATURE_OPS_MAX, op_signature

_WATCHED_MODULE_NAMES = ("torch", "torch.nn.functional", "torch.cuda", "torch.linalg", "torch.fft", "torch.special",
                         "torch.nn.init", "time", "torch.backends.cudnn")


def _watched_objects() -> list[tuple[str, Any]]:
    objs: list[tuple[str, Any]] = [(n, sys.modules[n]) for n in _WATCHED_MODULE_NAMES if n in sys.modules]
    objs.append(("torch.Tensor", torch.Tensor))
    objs.append(("torch.nn.Module", torch.nn.Module))
    objs.append(("torch.cuda.Event", torch.cuda.Event))
    objs.append(("torch.cuda.Stream", torch.cuda.Stream))
    for name, mod in list(sys.modules.items()):
        if name.startswith("cudal1.harness") and isinstance(mod, types.ModuleType):
            objs.append((name, mod))
    return objs


class IdentitySnapshot:
    """Identity of every public callable attribute of the watched modules and classes."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Any] = {}
        self._owners: dict[str, Any] = {}
        for oname, obj in _watched_objects():
            self._owners[oname] = obj
            for attr, val in list(vars(obj).items()):
                if attr.startswith("__") and attr not in ("__call__", "__add__", "__mul__", "__matmul__"):
                    continue
                if callable(val) or isinstance(val, (staticmethod, classmethod, property)):
                    self.items[(oname, attr)] = val

    def changed(self) -> list[str]:
        """Names whose binding differs now (patched, replaced or deleted)."""
        out = []
        for (oname, attr), val in self.items.items():
            now = vars(self._owners[oname]).get(attr, _MISSING)
            if now is not val:
                out.append(f"{oname}.{attr}")
        return out

    def restore(self) -> None:
        """Put the original bindings back."""
        for (oname, attr), val in self.items.items():
            owner = self._owners[oname]
            if vars(owner).get(attr, _MISSING) is not val:
                try:
                    setattr(owner, attr, val)
                except (AttributeError, TypeError):
                    pass


_MISSING = object()


def backend_flags() -> dict[str, Any]:
    """The global switches that change numerics or algorithm choice."""
    m = torch.backends.cuda.matmul
    return {
        "matmul.allow_tf32": m.allow_tf32,
        "matmul.allow_fp16_reduced_precision_reduction": m.allow_fp16_reduced_precision_reduction,
        "matmul.allow_bf16_reduced_precision_reduction": m.allow_bf16_reduced_precision_reduction,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
    }


def restore_backend_flags(flags: dict[str, Any]) -> None:
    m = torch.backends.cuda.matmul
    m.allow_tf32 = flags["matmul.allow_tf32"]
    m.allow_fp16_reduced_precision_reduction = flags["matmul.allow_fp16_reduced_precision_reduction"]
    m.allow_bf16_reduced_precision_reduction = flags["matmul.allow_bf16_reduced_precision_reduction"]
    torch.backends.cudnn.allow_tf32 = flags["cudnn.allow_tf32"]
    torch.backends.cudnn.benchmark = flags["cudnn.benchmark"]
    torch.set_float32_matmul_precision(flags["float32_matmul_precision"])


def flag_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(flags, descriptions) for switches the candidate changed."""
    flags, what = [], []
    for k, v in after.items():
        if before.get(k) != v:
            what.append(f"{k}: {before.get(k)!r} -> {v!r}")
            flags.append("library_flag" if k == "cudnn.benchmark" else "reduced_precision")
    return sorted(set(flags)), what


_LOW = {torch.float16, torch.bfloat16}
if hasattr(torch, "float8_e4m3fn"):
    _LOW |= {torch.float8_e4m3fn, torch.float8_e5m2}


class OpRecorder(TorchDispatchMode):
    """Records (op name, dtypes seen) of every ATen op dispatched while active, and the sequence of operators
    with their tensor arguments' shapes and dtypes (:meth:`signature`, for
    :mod:`cudal1.harness.novelty`)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: dict[str, set[torch.dtype]] = {}
        self.sequence: list[tuple[str, str]] = []

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        seen: set[torch.dtype] = set()
        shapes: list[str] = []
        for a in list(args) + list(kwargs.values()):
            for x in a if isinstance(a, (list, tuple)) else (a,):
                if isinstance(x, torch.Tensor):
                    seen.add(x.dtype)
                    shapes.append(f"{tuple(x.shape)}:{x.dtype}")
        if len(self.sequence) < SIGNATURE_OPS_MAX:
            self.sequence.append((str(func), ",".join(shapes)))
        if isinstance(kwargs.get("dtype"), torch.dtype):
            seen.add(kwargs["dtype"])
        out = func(*args, **kwargs)
        for x in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(x, torch.Tensor):
                seen.add(x.dtype)
        self.ops.setdefault(str(func), set()).update(seen)
        return out

    def low_precision_ops(self) -> list[str]:
        return sorted(op for op, dts in self.ops.items() if dts & _LOW)

    def signature(self) -> str:
        """:func:`cudal1.harness.novelty.op_signature` of the recorded call."""
        return op_signature(self.sequence)


def kernel_names(fn: Callable[[], Any], device: torch.device) -> list[str] | None:
    """Names of the CUDA kernels launched while ``fn()`` ran (None if the profiler is unavailable)."""
    if device.type != "cuda":
        return None
    try:
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize(device)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize(device)
        names = []
        for ev in prof.events():
            if getattr(ev, "device_type", None) is not None and str(ev.device_type).endswith("CUDA"):
                names.append(ev.name)
        return sorted(set(names))
    except Exception:  # noqa: BLE001 - CUPTI missing or busy: report unknown, never guess
        return None


def live_threads() -> frozenset[int]:
    """Identifiers of every thread of this process alive now: all of them, whoever made them, from
    ``/proc/self/task`` (native threads included: one started through ``_thread``, a C extension or a library
    is not in ``threading``'s list, and an issue found such a thread running beside the reference unseen:
    benchmarks/results/2026-12-05-library-docstring-figures.md). Where there is no ``/proc`` (macOS), the threads
    ``threading`` knows."""
    try:
        return frozenset(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        return frozenset(t.native_id or t.ident or 0 for t in threading.enumerate())


#: how long a thread that was joined may take to leave ``/proc/self/task`` (a joined Python thread's OS thread is
#: listed for a few milliseconds after ``join()`` returns, with one it started)
THREAD_EXIT_GRACE_S = 0.05


def threads_left(baseline: frozenset[int], grace_s: float = THREAD_EXIT_GRACE_S) -> frozenset[int]:
    """Threads alive now that were not in ``baseline``, once those that are exiting have had ``grace_s`` seconds
    to go (an empty set when none is left)."""
    import time

    end = time.monotonic() + grace_s
    while True:
        extra = live_threads() - baseline
        if not extra or time.monotonic() >= end:
            return extra
        time.sleep(0.001)


def warm_thread_pools() -> None:
    """Start torch's own CPU thread pools (intra-op, and the BLAS one under it) before the thread baseline is
    taken, so that the first parallel operation of a candidate's call does not count as a thread it left running.
    Runs a parallel elementwise operation and a small matrix product."""
    with torch.no_grad():
        x = torch.ones(1 << 17)
        x.add_(1.0)
        a = torch.ones(128, 128)
        torch.mm(a, a)


def training_modules(model: torch.nn.Module) -> list[str]:
    """Names of submodules in training mode (the harness puts everything in eval mode)."""
    return [n or "<root>" for n, m in model.named_modules() if m.training]
