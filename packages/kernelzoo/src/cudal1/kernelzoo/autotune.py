"""Autotuning of launch configs: time every candidate config of an op on the GPU at hand, once per input
class, keep the fastest, remember it on disk.

An op that tunes calls :func:`tuned` with its candidates (dicts, e.g. ``{"backend": "triton", "BLOCK":
4096, "num_warps": 8}``), a key describing the input class (e.g. dtype and a numel bucket), a ``run(config)``
that launches the op once with that config, and its per-family default. What happens depends on
``$CUDAL1_AUTOTUNE``:

* ``on``: a cached winner if there is one, else every candidate is timed now (CUDA events, median of
  :data:`REPS` calls after :data:`WARMUP`), the winner cached in memory and on disk;
* ``cache`` (default): a cached winner if there is one, else the default; never times anything;
* ``off``: always the default (the per-family table).

Forcing a family with ``$CUDAL1_ARCH`` also gives the default: that is how another architecture's table is
exercised. The disk cache is one JSON file, ``$CUDAL1_CACHE_DIR/autotune.json`` (default
``~/.cache/cudal1``), keyed by op, device name, family and input class, and holding every candidate's time
(ms) so a choice can be audited. It is written atomically; when it cannot be written (read-only home, say)
the winners stay in memory and a warning says so once.

Tuning costs ``len(candidates) * (WARMUP + REPS)`` extra calls the first time an input class is seen in a
process without a cached winner: the first call of an op is slower, as with ``triton.autotune``.

Why ``cache`` is the default: at the suite's sizes, tuning the elementwise ops picked configs only slightly
faster by its own timing, yet the harness's speedups were no better than with the sm90 table
(benchmarks/results/2026-11-22-kernelzoo-autotune-h100.md). Run ``CUDAL1_AUTOTUNE=on`` once on a GPU to fill
the cache where it may pay (other GPUs, other sizes); later runs use those winners.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from .arch import ENV as ARCH_ENV
from .arch import current_family

__all__ = ["CACHE_ENV", "DEFAULT_MODE", "ENV", "MODES", "REPS", "WARMUP", "cache_path", "choose", "choice_state", "clear_memory", "mode",
           "numel_bucket", "time_ms", "tuned"]

ENV = "CUDAL1_AUTOTUNE"
CACHE_ENV = "CUDAL1_CACHE_DIR"
MODES = ("on", "cache", "off")
DEFAULT_MODE = "cache"
WARMUP = 2
REPS = 5

_LOCK = threading.Lock()
_MEMORY: dict[str, dict[str, Any]] = {}
_LOADED: set[Path] = set()
_WARNED: set[Path] = set()
_GENERATION = [0]  # bumped by clear_memory (see choice_state)


def mode() -> str:
    """``$CUDAL1_AUTOTUNE`` (validated), default :data:`DEFAULT_MODE` (``"cache"``)."""
    value = os.environ.get(ENV, DEFAULT_MODE).strip().lower() or DEFAULT_MODE
    if value not in MODES:
        raise ValueError(f"{ENV}={value!r} is not one of {', '.join(MODES)}")
    return value


def cache_path() -> Path:
    """The disk cache file: ``$CUDAL1_CACHE_DIR/autotune.json``, default ``~/.cache/cudal1/autotune.json``."""
    root = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "cudal1")
    return Path(root) / "autotune.json"


def clear_memory() -> None:
    """Forget the in-process winners (the disk cache is read again on the next lookup)."""
    with _LOCK:
        _MEMORY.clear()
        _LOADED.clear()
        _GENERATION[0] += 1


def choice_state() -> tuple[Any, ...]:
    """Everything besides its arguments that :func:`tuned`'s answer depends on: the mode, a forced family,
    the cache file and how often the in-process winners were cleared. Ops that memoize their config per
    input class key the memo with it (a winner found while tuning is the answer itself: memoized as is)."""
    return (os.environ.get(ENV), os.environ.get(ARCH_ENV), os.environ.get(CACHE_ENV), _GENERATION[0])


def numel_bucket(n: int) -> int:
    """The input-class size of ``n`` elements: the next power of two (0 for an empty tensor)."""
    return 0 if n <= 0 else 1 << (int(n) - 1).bit_length()


def time_ms(fn: Callable[[], Any], *, warmup: int = WARMUP, reps: int = REPS) -> float:
    """Median time of ``fn()`` in ms (the zoo's one timer, cold L2: :func:`cudal1.kernelzoo.bench_timer.time_ms`)."""
    from .bench_timer import time_ms as timer

    return timer(fn, warmup=warmup, reps=reps)


def _load(path: Path) -> None:
    if path in _LOADED:
        return
    _LOADED.add(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError) as e:
        warnings.warn(f"cudal1 autotune cache {path} is unreadable ({e}); tuning again", stacklevel=3)
        return
    if isinstance(data, dict):
        for key, entry in data.items():
            if isinstance(entry, dict) and isinstance(entry.get("config"), dict):
                _MEMORY.setdefault(key, entry)


def _save(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            on_disk = json.loads(path.read_text())
            if not isinstance(on_disk, dict):
                on_disk = {}
        except (OSError, ValueError):
            on_disk = {}
        on_disk.update(_MEMORY)  # other processes' winners are kept, ours win ties of the same key
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".autotune-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(on_disk, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError as e:
        if path not in _WARNED:
            _WARNED.add(path)
            warnings.warn(f"cudal1 autotune: cannot write {path} ({e}); tuned configs stay in this process "
                          f"(set {CACHE_ENV} to a writable folder)", stacklevel=3)


def _device_id(device: torch.device) -> str:
    return f"{torch.cuda.get_device_name(device)}|{current_family(device)}"


def tuned(op: str, key: Sequence[Any], candidates: Sequence[Mapping[str, Any]], run: Callable[[Mapping[str, Any]], Any],
          default: Mapping[str, Any], device: torch.device, *,
          timer: Callable[[Callable[[], Any]], float] | None = None) -> Mapping[str, Any]:
    """The config ``op`` should use for inputs of class ``key`` on ``device`` (see the module docstring):
    ``default`` for a non-CUDA device, with ``$CUDAL1_ARCH`` set or autotuning off, else :func:`choose`
    keyed by op, device name, family and ``key``."""
    if not candidates or device.type != "cuda" or os.environ.get(ARCH_ENV) or mode() == "off":
        return default
    return choose("|".join([op, _device_id(device), *map(str, key)]), candidates, run, default, timer=timer)


def choose(full_key: str, candidates: Sequence[Mapping[str, Any]], run: Callable[[Mapping[str, Any]], Any],
           default: Mapping[str, Any], *, timer: Callable[[Callable[[], Any]], float] | None = None,
           ) -> Mapping[str, Any]:
    """The cached winner for ``full_key`` if it is one of ``candidates``; else, in mode ``on``, the fastest
    candidate by ``timer(lambda: run(config)) -> ms`` (default :func:`time_ms`), cached in memory and on
    disk; in mode ``cache`` (or when every candidate raises) ``default``. A candidate that raises is skipped
    and its error kept in the cache entry. Returns ``default`` itself or one of ``candidates``."""
    path = cache_path()
    with _LOCK:
        _load(path)
        entry = _MEMORY.get(full_key)
    if entry is not None:
        for c in candidates:
            if dict(c) == entry["config"]:
                return c
        # a winner from another version's candidate list: tune again below (or use the default)
    if mode() != "on":
        return default
    timer = timer or time_ms
    timings: list[float | None] = []
    errors: dict[str, str] = {}
    for i, c in enumerate(candidates):
        try:
            timings.append(float(timer(lambda c=c: run(c))))
        except Exception as e:  # noqa: BLE001 - a config that cannot launch here is not a winner
            timings.append(None)
            errors[str(i)] = f"{type(e).__name__}: {e}"[:300]
    ok = [(t, i) for i, t in enumerate(timings) if t is not None]
    if not ok:
        return default
    best = min(ok)[1]
    with _LOCK:
        _MEMORY[full_key] = {"config": dict(candidates[best]), "ms": timings[best],
                             "candidates": [{"config": dict(c), "ms": t} for c, t in zip(candidates, timings, strict=True)],
                             "errors": errors, "torch": torch.__version__}
        _save(path)
    return candidates[best]
