"""Who may use a device when: the lanes that share one GPU (or the CPU) overlap everything but timing (issue 41).

A pool may run several lanes on one device (:class:`cudal1.harness.pool.EvalPool`'s ``lanes_per_gpu``, or
``cpu_lanes``). Each lane evaluates its own pairs in its own processes on its own CPU cores; all lanes of a device
share one :class:`DeviceGate`:

- **work** (:meth:`DeviceGate.work`, shared): everything a lane does for a pair except timing it: starting and
  retiring workers, setting up a reference, loading a candidate, correctness trials, profiling, the verdict, the
  store write. Any number of lanes may be inside work at once.
- **timing** (:meth:`DeviceGate.timing`, exclusive): a reference timed alone, a pair's paired rounds, the drift
  re-check's rounds. A lane enters only when no other lane is inside work or timing, no lane starts work while it
  runs (a waiting timer goes before new work), and before its first batch the gate's ``quiesce`` has waited until
  every worker a lane started ahead has made its CUDA context and every worker a lane retired is gone, and has
  stopped (``SIGSTOP``) every other lane's candidate that is loaded and waiting for its turn (its helpers, threads
  and children must not run beside another pair's timing any more than beside its own reference's: issue 40);
  ``resume`` lets them go on. So while a pair is timed nothing else of the pool runs on the device, on the lanes'
  cores or in the parent's threads, as with one lane: the measurement's rules are unchanged, and what overlaps is
  the lanes' other work.

A lane thread normally enters timing from inside its own work: :meth:`DeviceGate.timing` lets go of that thread's
work first and takes it back afterwards (after any timer that waited meanwhile), so two lanes waiting to time never
hold each other up.

Memory is not gated: lanes of one GPU hold their workers' memory side by side, and a pair can run out of GPU memory
only because other lanes hold theirs (kernelbench-v0's 36_RMSNorm_ and four more tasks, three lanes on an 80 GB
H100: benchmarks/results/2026-12-06-kb-selfrun-after-h100.md). :class:`PairTurns` is the device's second rule: lanes
run their pairs side by side (:meth:`PairTurns.shared`), and a pair that ran out of GPU memory there runs again
alone (:meth:`PairTurns.alone`: no other lane is inside a pair, and each has let go of its reference), so its
verdict is the one it gets with the device to itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class DeviceGate:
    """Shared work, exclusive timing, for the lanes of one device.

    Args:
        quiesce: called with the timing lane's name once it holds the device, before it times (the pool waits there
            for the workers its lanes started ahead and retired, and stops the other lanes' candidates); ``None``:
            nothing to do.
        resume: called with the timing lane's name when its timing ends, before the device is let go (the pool
            resumes what ``quiesce`` stopped); ``None``: nothing to do.

    Attributes:
        log: when :attr:`keep_log` is set, ``(lane, mode, start, end)`` per section (``time.monotonic`` seconds;
            mode ``"work"`` or ``"timing"``), for tests and profiles.
    """

    def __init__(self, quiesce: Callable[[str], None] | None = None,
                 resume: Callable[[str], None] | None = None) -> None:
        self.quiesce, self.resume = quiesce, resume
        self._cond = threading.Condition()
        self._working = 0  # threads inside work
        self._timing = False
        self._timers_waiting = 0
        self._local = threading.local()
        self.keep_log = False
        self.log: list[tuple[str, str, float, float]] = []
        self.waited_s = {"work": 0.0, "timing": 0.0}  #: seconds lanes spent waiting to enter, per mode

    def _depth(self) -> int:
        return getattr(self._local, "depth", 0)

    def _enter_work(self) -> None:
        with self._cond:
            t0 = time.monotonic()
            while self._timing or self._timers_waiting:
                self._cond.wait()
            self.waited_s["work"] += time.monotonic() - t0
            self._working += 1

    def _leave_work(self) -> None:
        with self._cond:
            self._working -= 1
            self._cond.notify_all()

    def _record(self, lane: str, mode: str, start: float) -> None:
        if self.keep_log:
            with self._cond:
                self.log.append((lane, mode, start, time.monotonic()))

    @contextmanager
    def work(self, lane: str = "") -> Iterator[None]:
        """A section of a lane's work for a pair (shared with other lanes' work; never beside a timing). Nested
        sections of one thread are one section."""
        depth = self._depth()
        if depth == 0:
            self._enter_work()
        self._local.depth = depth + 1
        start = time.monotonic()
        try:
            yield
        finally:
            self._local.depth = depth
            if depth == 0:
                self._leave_work()
                self._record(lane, "work", start)

    @contextmanager
    def timing(self, lane: str = "") -> Iterator[None]:
        """The device alone for a timing phase: waits until no lane is inside work or timing, runs ``quiesce``,
        and holds every other lane out until the block ends. A thread inside work lets go of it meanwhile and is
        inside it again when the block ends (or raises)."""
        depth = self._depth()
        if depth:
            self._local.depth = 0
            self._leave_work()
        try:
            self._enter_timing()
            start = time.monotonic()
            try:
                if self.quiesce is not None:
                    self.quiesce(lane)
                yield
            finally:
                try:
                    if self.resume is not None:
                        self.resume(lane)
                finally:
                    with self._cond:
                        self._timing = False
                        self._cond.notify_all()
                    self._record(lane, "timing", start)
        finally:
            if depth:
                self._enter_work()
                self._local.depth = depth

    def _enter_timing(self) -> None:
        with self._cond:
            self._timers_waiting += 1
            t0 = time.monotonic()
            try:
                while self._timing or self._working:
                    self._cond.wait()
            finally:
                self._timers_waiting -= 1
                self._cond.notify_all()  # work held back for this timer may go on if it gave up
            self.waited_s["timing"] += time.monotonic() - t0
            self._timing = True


class PairTurns:
    """Pairs side by side, or one pair alone, for the lanes of one device (a readers-writer lock at the level of
    whole pairs, with the lone pair first: once one waits, no lane starts another pair until it is done).

    ``shared`` and ``alone`` are entered by a lane's thread outside :class:`DeviceGate`'s sections (around them),
    so the two never wait on each other in opposite orders."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0  # lanes inside a shared pair
        self._alone = False
        self._lone_waiting = 0
        self.alone_count = 0  #: pairs run alone so far (for tests and logs)

    @contextmanager
    def shared(self) -> Iterator[None]:
        """A pair (or a lane's closing) beside other lanes' pairs; waits while a pair runs alone or waits to."""
        with self._cond:
            while self._alone or self._lone_waiting:
                self._cond.wait()
            self._inside += 1
        try:
            yield
        finally:
            with self._cond:
                self._inside -= 1
                self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        """The device to one pair: waits until no other lane is inside a pair, and holds them all out until the
        block ends. The caller must not be inside :meth:`shared` itself."""
        with self._cond:
            self._lone_waiting += 1
            try:
                while self._alone or self._inside:
                    self._cond.wait()
            finally:
                self._lone_waiting -= 1
            self._alone = True
            self.alone_count += 1
        try:
            yield
        finally:
            with self._cond:
                self._alone = False
                self._cond.notify_all()


__all__ = ["DeviceGate", "PairTurns"]
