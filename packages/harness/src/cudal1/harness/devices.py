"""The machine's GPUs as a fresh process sees them, probed without a CUDA context in this process."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from typing import Any


@functools.lru_cache(maxsize=4)
def _probe(visible: str | None) -> tuple[dict[str, Any], ...]:
    return tuple(_probe_now())


def probe_cuda_devices() -> list[dict[str, Any]]:
    """GPUs visible to a fresh process: index, name, compute capability. [] without CUDA.

    Runs in a subprocess so that this (parent) process never creates a CUDA context; remembered per value of
    ``CUDA_VISIBLE_DEVICES`` (the GPUs of a machine do not change while a program runs)."""
    return list(_probe(os.environ.get("CUDA_VISIBLE_DEVICES")))


def _probe_now() -> list[dict[str, Any]]:
    code = (
        "import json, torch\n"
        "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
        "print(json.dumps([{'index': i, 'name': torch.cuda.get_device_name(i),"
        " 'cc': '%d.%d' % torch.cuda.get_device_capability(i)} for i in range(n)]))\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return []


def default_device() -> str:
    """``cuda`` when a GPU is visible, else ``cpu``."""
    return "cuda" if probe_cuda_devices() else "cpu"
