"""Worker side: the clock each worker times its own calls with.

A :class:`Timer` is made when the worker's session configures its device, before any candidate code is imported:
the clock and synchronise functions it holds are captured then. What it reports is a claim the parent checks
against its own clock around each batch (:mod:`cudal1.harness.clockcheck`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch


class Timer:
    """Times one call between two whole-device synchronisations, with the host's monotonic clock.

    The clock and synchronise functions are captured when the Timer is made (before any candidate code
    is imported), so a candidate that later patches ``time`` or ``torch.cuda.synchronize`` does not
    change what is measured.
    """

    def __init__(self, device: torch.device, l2_flush_bytes: int = 0) -> None:
        self.device = device
        self._clock = time.perf_counter_ns
        self._sync: Callable[[], None]
        self._events: tuple[Any, Any] | None = None
        if device.type == "cuda":
            sync = torch.cuda.synchronize
            dev = device
            self._sync = lambda: sync(dev)
            n = max(l2_flush_bytes // 4, 1)
            self._flush_buf = torch.empty(n, dtype=torch.float32, device=device) if l2_flush_bytes else None
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        else:
            self._sync = lambda: None
            self._flush_buf = None

    def flush_l2(self) -> None:
        """Overwrite a buffer larger than L2 so no call starts with its data cached (CUDA only)."""
        if self._flush_buf is not None:
            self._flush_buf.zero_()

    def time_call(self, fn: Callable[..., Any], args: Sequence[Any]) -> tuple[float, Any]:
        """Run ``fn(*args)`` once; return (milliseconds, output)."""
        self.flush_l2()
        self._sync()
        t0 = self._clock()
        out = fn(*args)
        self._sync()
        t1 = self._clock()
        return (t1 - t0) / 1e6, out

    def time_call_detailed(self, fn: Callable[..., Any], args: Sequence[Any]) -> tuple[float, float | None, Any]:
        """Like :meth:`time_call`, also timed with CUDA events on the current stream (start recorded after the
        leading synchronisation, end before the trailing one): (host ms, event ms or None on CPU, output).
        Event time leaves out launch and synchronisation latency, and work on other streams."""
        self.flush_l2()
        self._sync()
        if self._events is None:
            t0 = self._clock()
            out = fn(*args)
            t1 = self._clock()
            return (t1 - t0) / 1e6, None, out
        start, end = self._events
        start.record()
        t0 = self._clock()
        out = fn(*args)
        end.record()
        self._sync()
        t1 = self._clock()
        return (t1 - t0) / 1e6, float(start.elapsed_time(end)), out
