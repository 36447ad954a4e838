"""Worker side: the address-space cap a CPU worker without a memory cgroup sets itself, once its imports are mapped
and before it reads any command (the parent hands it the bytes in :data:`cudal1.harness.wire.ADDRESS_SPACE_ENV`;
:mod:`cudal1.harness.sandbox` says where this limit applies)."""

from __future__ import annotations

import os

from .wire import ADDRESS_SPACE_ENV


def limit_address_space() -> int | None:
    """Called by the worker after its imports, before its first command: when :data:`ADDRESS_SPACE_ENV` is set,
    cap the process's address space (``RLIMIT_AS``, soft and hard) at what it maps now plus that many bytes, and
    return the cap. A cap set before the imports, at exec, would count the shared libraries a CUDA build of torch
    maps (gigabytes of address space, little of it resident): such a CPU worker could not start under a 1.5 GB
    limit (a GPU host without cgroups; benchmarks/results/2026-12-05-library-docstring-figures.md). Candidate
    code runs only after this, and without ``CAP_SYS_RESOURCE`` it cannot raise a hard limit. Where ``/proc`` does
    not say what is mapped (not Linux), the cap is the limit alone, as an exec-time cap was; a lower hard limit
    already in place is kept. Raises when the cap cannot be set (a worker must not run candidate code without the
    limit it was given)."""
    import resource  # POSIX only: imported here so that this module imports everywhere

    value = os.environ.pop(ADDRESS_SPACE_ENV, "")
    if not value:
        return None
    mapped = 0
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            mapped = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
    except (OSError, StopIteration, ValueError):
        pass
    cap = mapped + int(value)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    return cap
