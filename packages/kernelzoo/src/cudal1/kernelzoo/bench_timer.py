"""The zoo's one GPU timer, for benchmarks, tuning and autotune alike: the median of CUDA-event timed calls,
each after the L2 cache was flushed (a cold L2, as a kernel meets it inside a model, where the tensors it reads
were written long before; a warm L2 flatters every op whose inputs fit in it: 50 MB on Hopper).

    ms = time_ms(lambda: op(x), reps=20)            # ms per call, median
    ms = time_ms(step, setup=zero_grads)            # setup runs before each call, untimed
    all_ms = times_ms(step, warmup=0, reps=8, cold_l2=False)   # every call's time (a training step's, say)
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["FLUSH_BYTES", "time_ms", "times_ms"]

#: bytes written between timed calls to evict the L2 (several times the largest L2 of the families we target)
FLUSH_BYTES = 256 << 20

_FLUSH: dict[torch.device, torch.Tensor] = {}


def _flush(device: torch.device) -> None:
    buf = _FLUSH.get(device)
    if buf is None:
        buf = _FLUSH[device] = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    buf.zero_()


def time_ms(fn: Callable[[], Any], *, warmup: int = 3, reps: int = 20, cold_l2: bool = True,
            setup: Callable[[], Any] | None = None, device: torch.device | str | None = None) -> float:
    """Median milliseconds of ``fn()`` (:func:`times_ms`)."""
    return statistics.median(times_ms(fn, warmup=warmup, reps=reps, cold_l2=cold_l2, setup=setup, device=device))


def times_ms(fn: Callable[[], Any], *, warmup: int = 3, reps: int = 20, cold_l2: bool = True,
             setup: Callable[[], Any] | None = None, device: torch.device | str | None = None) -> list[float]:
    """Milliseconds of each of ``reps`` calls of ``fn()`` on the current CUDA stream after ``warmup`` ones;
    before each timed call ``setup()`` (if given) runs and, with ``cold_l2``, :data:`FLUSH_BYTES` are written
    to evict the L2 cache, both outside the timed interval. Raises RuntimeError without CUDA."""
    if not torch.cuda.is_available():
        raise RuntimeError("time_ms times CUDA work: no CUDA device is available")
    dev = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    torch.cuda.synchronize(dev)
    times = []
    for _ in range(reps):
        if setup is not None:
            setup()
        if cold_l2:
            _flush(dev)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times
