"""How long a worker's threads waited for a CPU core while the parent timed it (issue 40: outside load).

Linux keeps, for every thread, the nanoseconds it spent runnable but not running (``run_delay``, the second field
of ``/proc/<pid>/task/<tid>/schedstat``). A worker whose threads wait for a core during its timed batches is being
timed on a machine that has no core free for it: another program's load, or more torch threads than free cores.
On the 2-core CPU machine, with one busy process beside a pool whose workers ran two torch threads, the reference's
calls took 17-20 ms alone and 0.24-16.6 ms paired against 0.12-0.15 ms on the quiet machine, and the harness paid
an adversary 3.95x and an honest copy 0.03x (benchmarks/results/2026-12-06-outside-load-cpu.md): figures of chaos,
verified. The reference's wait is the parent's to read (its process runs only the task's own code), in
nanoseconds, whoever caused it; :func:`measure` turns it into a share of the timed time per torch thread, and
:data:`WAIT_LIMIT` with :data:`WAIT_FLOOR_MS` say when the reference's time is not to be trusted (``cpu_contended``).

Only where ``/proc/<pid>/task/<tid>/schedstat`` exists (Linux with ``CONFIG_SCHED_INFO``, as every distribution
kernel has); elsewhere nothing is measured and the rule does not apply (said in the harness README).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

#: the reference's threads waited for a core more than this share of its timed batches, per torch thread. Measured
#: on the 2-core machine (benchmarks/results/2026-12-07-cpu-contention.md): a quiet pool's reference waited 0.01-0.14
#: (0.19 once in a test run; two torch threads: the OpenMP threads' own wake-ups), one torch thread beside a busy
#: process 0.00-0.16, two torch threads beside it 0.28-0.47 in 17 of 23 attempts (their buckets spread 1.0-332 times
#: their median)
WAIT_LIMIT = 0.25
#: and each thread waited at least this long in all (ms): a window of a few milliseconds (a test's tiny budget, a
#: yardstick of a few short batches) reads a share over the limit from one scheduler slice given to another process
#: (seen once in a CI run: a zoo solution's reference-like pair flagged at a 0.1 s budget); sustained contention
#: waits tens to hundreds of milliseconds in an attempt
WAIT_FLOOR_MS = 10.0

__all__ = ["WAIT_FLOOR_MS", "WAIT_LIMIT", "Wait", "contended", "measure", "thread_wait_ns"]


class Wait(NamedTuple):
    """How long a worker's torch threads waited for a core over some timed batches, per thread."""

    share: float  #: of the batches' time on the parent's clock (0: it always had its cores)
    ms: float  #: in all (ms)


def thread_wait_ns(pids: Iterable[int]) -> int | None:
    """Nanoseconds the threads of ``pids`` have waited runnable for a CPU core, summed (since each started); None
    where no such counter can be read (no ``/proc``, or a kernel without scheduler statistics). A thread or process
    that ended since counts nothing."""
    total = 0
    seen = False
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    fields = f.read().split()
            except OSError:
                continue
            if len(fields) >= 2:
                total += int(fields[1])
                seen = True
    return total if seen else None


def measure(waited_ms: float, timed_ms: float, threads: int) -> Wait:
    """The wait per thread of ``threads`` torch threads whose waits summed to ``waited_ms`` over batches that took
    ``timed_ms`` on the parent's clock (both ms)."""
    per_thread = waited_ms / max(threads, 1)
    return Wait(per_thread / timed_ms if timed_ms > 0 else 0.0, per_thread)


def contended(wait: Wait | None) -> bool:
    """Whether a measured wait means the worker was timed without the cores it needed: over :data:`WAIT_LIMIT` of
    the time and at least :data:`WAIT_FLOOR_MS`. A wait that could not be measured (None) is not evidence either way."""
    return wait is not None and wait.share > WAIT_LIMIT and wait.ms >= WAIT_FLOOR_MS
