"""Roofline figures for reports: the work a task does and what the device can do.

- :func:`task_work`: FLOPs of one reference forward (``torch.utils.flop_counter``: matmuls, convolutions,
  attention; elementwise ops and reductions count 0) and its ideal memory traffic (bytes of inputs,
  parameters, buffers and outputs, each moved once), found on the ``meta`` device: no memory is allocated
  and no GPU is touched, whatever the task's sizes.
- :func:`measure_device_peaks`: the device's device-to-device copy bandwidth (bytes read + written per
  second, ``y.copy_(x)`` on 1 GiB on a GPU, 128 MiB on a CPU) and fp32 matmul rate (8192^3 on a GPU,
  1024^3 on a CPU, TF32 off), each the best of several timed repetitions, measured in a subprocess so that
  the calling process never creates a CUDA context.
- :func:`roofline_ms`: the fastest a forward can be on that device, ``max(flops / fp32 rate, bytes /
  copy bandwidth)`` (ms); ``roofline_ms / measured ms`` is the fraction of the roofline a run attains.

Example:
    >>> from cudal1.harness import load_suite
    >>> w = task_work(next(t for t in load_suite("builtin") if t.name == "relu"))
    >>> w.flops, w.ideal_bytes > 0
    (0, True)
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import types
from dataclasses import dataclass
from typing import Any

from .types import Task

__all__ = ["DevicePeaks", "TaskWork", "measure_device_peaks", "nbytes_of", "roofline_ms", "task_work", "tensors_of"]


@dataclass(frozen=True)
class TaskWork:
    """Work of one reference forward. ``flops``: FLOPs (None when it could not be counted); ``ideal_bytes``:
    bytes of inputs + parameters + buffers + outputs (None likewise); ``error``: why not, else ""."""

    task: str
    flops: int | None
    ideal_bytes: int | None
    error: str = ""

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity (FLOP/byte), or None when unknown."""
        if self.flops is None or not self.ideal_bytes:
            return None
        return self.flops / self.ideal_bytes

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class DevicePeaks:
    """Measured capabilities of one device. ``copy_bytes_per_s``: bytes read + written per second by a
    device-to-device copy; ``fp32_flop_per_s``: fp32 matmul FLOP/s with TF32 off."""

    device: str
    name: str
    copy_bytes_per_s: float
    fp32_flop_per_s: float

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the compute roof meets the memory roof."""
        return self.fp32_flop_per_s / self.copy_bytes_per_s

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DevicePeaks:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls)})


def tensors_of(x: Any) -> list[Any]:
    """The tensors in ``x`` (a tensor, or lists / tuples / dicts of them, nested), in order."""
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in tensors_of(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in tensors_of(v)]
    return []


def nbytes_of(ts: list[Any]) -> int:
    """Bytes held by the tensors ``ts`` (numel x element size each)."""
    return int(sum(t.numel() * t.element_size() for t in ts))


def task_work(task: Task) -> TaskWork:
    """FLOPs and ideal bytes of one forward of ``task``'s reference, on the meta device (see module
    docstring). A task whose forward cannot run on meta tensors (data-dependent shapes, ``.item()``) gets
    ``flops = ideal_bytes = None`` and the reason in ``error``; this never raises for a bad task."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    mod = types.ModuleType(f"_cudal1_work_{task.name}")
    try:
        with torch.device("meta"), torch.no_grad():
            exec(compile(task.source, f"<task {task.name}>", "exec"), mod.__dict__)
            init = mod.get_init_inputs() if hasattr(mod, "get_init_inputs") else []
            model = mod.Model(*init)
            inputs = list(mod.get_inputs())
            counter = FlopCounterMode(display=False)
            with counter:
                out = model(*inputs)
            flops = int(counter.get_total_flops())
            params = list(model.parameters()) + list(model.buffers())
            ideal = nbytes_of(tensors_of(inputs)) + nbytes_of(params) + nbytes_of(tensors_of(out))
    except Exception as e:  # noqa: BLE001 - a task that cannot be traced is reported, not fatal
        return TaskWork(task.name, None, None, error=f"{type(e).__name__}: {str(e)[:200]}")
    return TaskWork(task.name, flops, ideal)


_PEAKS_SCRIPT = r"""
import json, sys, time, torch
dev = torch.device(sys.argv[1])
gpu = dev.type == "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
def clock(fn, reps):
    for _ in range(2):
        fn()
    if gpu:
        torch.cuda.synchronize(dev)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter(); fn()
        if gpu:
            torch.cuda.synchronize(dev)
        times.append(time.perf_counter() - t0)
    return min(times)  # a peak: the best of the repetitions
n = (1 << 28) if gpu else (1 << 25)          # fp32 elements: 1 GiB on a GPU, 128 MiB on a CPU
x = torch.randn(n, device=dev); y = torch.empty_like(x)
copy_s = clock(lambda: y.copy_(x), 20 if gpu else 8)
del x, y
m = 8192 if gpu else 1024
a = torch.randn(m, m, device=dev); b = torch.randn(m, m, device=dev)
mm_s = clock(lambda: a @ b, 10 if gpu else 8)
name = torch.cuda.get_device_name(dev) if gpu else "cpu"
print(json.dumps({"device": dev.type, "name": name, "copy_bytes_per_s": 2 * 4 * n / copy_s,
                  "fp32_flop_per_s": 2 * m ** 3 / mm_s}))
"""


def measure_device_peaks(device: str = "cuda", timeout_s: float = 300.0) -> DevicePeaks:
    """Measure copy bandwidth and fp32 matmul rate of ``device`` (``cuda``, ``cuda:N`` or ``cpu``) in a
    subprocess (a few seconds on a GPU). RuntimeError saying why when the measurement fails."""
    try:
        out = subprocess.run([sys.executable, "-c", _PEAKS_SCRIPT, device], capture_output=True, text=True,
                             timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"measuring the peaks of {device} took longer than {timeout_s:.0f} s") from e
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"measuring the peaks of {device} failed: {tail[0]}")
    return DevicePeaks.from_dict(json.loads(out.stdout.strip().splitlines()[-1]))


def roofline_ms(work: TaskWork, peaks: DevicePeaks) -> float | None:
    """The roofline's lower bound on one forward's time (ms) on ``peaks``' device, or None if unknown."""
    if work.flops is None or work.ideal_bytes is None:
        return None
    t = max(work.flops / peaks.fp32_flop_per_s, work.ideal_bytes / peaks.copy_bytes_per_s)
    return t * 1e3 if t > 0 and math.isfinite(t) else None
