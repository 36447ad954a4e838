"""Architecture families and per-family launch configs.

Each op keeps a small table ``{"sm80": cfg, "sm86": cfg, "sm89": cfg, "sm90": cfg}``. The family comes
from the device's compute capability, or from ``$CUDAL1_ARCH`` (``sm80``, ``sm86``, ``sm89``, ``sm90``),
so another architecture's config can be forced on the GPU at hand, and compiled for without one.
"""

from __future__ import annotations

import functools
import os
from typing import Any, TypeVar

import torch

FAMILIES: dict[tuple[int, int], str] = {(8, 0): "sm80", (8, 6): "sm86", (8, 9): "sm89", (9, 0): "sm90"}
#: compute capability of each family, for Triton's GPUTarget(cuda, cc, 32)
CAPABILITY: dict[str, int] = {"sm80": 80, "sm86": 86, "sm89": 89, "sm90": 90}
#: shared memory one block may use (opt-in maximum, bytes) on each family's GPUs: A100 163 KB; RTX 3090 / A10 and
#: L40 / RTX 4090 99 KB; H100 / H20 227 KB (CUDA programming guide, compute capabilities table)
MAX_SHARED_BYTES: dict[str, int] = {"sm80": 166912, "sm86": 101376, "sm89": 101376, "sm90": 232448}
ENV = "CUDAL1_ARCH"

T = TypeVar("T")


def family_of(capability: tuple[int, int]) -> str:
    """The config family for a compute capability: exact match, else the newest family not newer than it
    (sm87 -> sm86, sm100 -> sm90), else sm80."""
    if capability in FAMILIES:
        return FAMILIES[capability]
    older = [cc for cc in FAMILIES if cc <= capability]
    return FAMILIES[max(older)] if older else "sm80"


def current_family(device: torch.device | None = None) -> str:
    """``$CUDAL1_ARCH`` if set (validated), else the family of ``device`` (default: the current GPU)."""
    forced = os.environ.get(ENV)
    if forced:
        if forced not in CAPABILITY:
            raise ValueError(f"{ENV}={forced!r} is not one of {', '.join(CAPABILITY)}")
        return forced
    if device is None or device.index is None:
        if not torch.cuda.is_available():
            return "sm80"
        index = torch.cuda.current_device()
    else:
        index = device.index
    return _family_of_index(index)


@functools.cache
def _family_of_index(index: int) -> str:
    """A device's family, looked up once per process (ops call :func:`pick` on every launch)."""
    return family_of(torch.cuda.get_device_capability(index))


def pick(table: dict[str, T], device: torch.device | None = None) -> T:
    """The entry of a per-family table for ``device``."""
    return table[current_family(device)]


def check_table(table: dict[str, Any], name: str) -> None:
    """Every op's table must name all four families (so no variant rots unseen)."""
    missing = set(CAPABILITY) - set(table)
    if missing:
        raise AssertionError(f"{name}: launch-config table lacks {sorted(missing)}")
