"""How long a worker's threads waited for a CPU core while the parent timed it (issue 40: outside load).

Linux keeps, for every thread, the nanoseconds it spent runnable but not running (``run_delay``, the second field
of ``/proc/<pid>/task/<tid>/schedstat``). A worker whose threads wait for a core during its timed batches is being
timed on a machine that has no core free for it: another program's load, or more torch threads than free cores.
On the 2-core CPU machine, with one busy process beside a pool whose workers ran two torch threads, the reference's
calls took 17-20 ms alone and 0.24-16.6 ms paired against 0.12-0.15 ms on the quiet machine, and the harness paid
an adversary 3.95x and an honest copy 0.03x (benchmarks/results/2026-12-06-outside-load-cpu.md): figures of chaos,
verified. The reference's wait is the parent's to read (its process runs only the task's own code), in
nanoseconds, whoever caused it; :func:`wait_share` turns it into a share of the timed time per torch thread and
:data:`WAIT_LIMIT` says when the reference's time is not to be trusted (``cpu_contended``).

Only where ``/proc/<pid>/task/<tid>/schedstat`` exists (Linux with ``CONFIG_SCHED_INFO``, as every distribution
kernel has); elsewhere nothing is measured and the rule does not apply (said in the harness README).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

#: the reference's threads waited for a core more than this share of its timed batches, per torch thread. Measured
#: on the 2-core machine (benchmarks/results/2026-12-07-cpu-contention.md): a quiet pool's reference waited 0.01-0.14
#: (0.19 once in a test run; two torch threads: the OpenMP threads' own wake-ups), one torch thread beside a busy
#: process 0.00-0.16, two torch threads beside it 0.28-0.47 in 17 of 23 attempts (their buckets spread 1.0-332 times
#: their median)
WAIT_LIMIT = 0.25

__all__ = ["WAIT_LIMIT", "contended", "thread_wait_ns", "wait_share"]


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


def wait_share(waited_ms: float, timed_ms: float, threads: int) -> float:
    """The share of ``timed_ms`` (ms on the parent's clock) that each of ``threads`` torch threads waited for a core
    on average (``waited_ms``: the threads' waits summed, ms): 0 for a worker that always had its cores."""
    if timed_ms <= 0:
        return 0.0
    return waited_ms / timed_ms / max(threads, 1)


def contended(share: float | None) -> bool:
    """Whether a wait share (:func:`wait_share`) means the worker was timed without the cores it needed; a share
    that could not be measured (None) is not evidence either way."""
    return share is not None and share > WAIT_LIMIT
