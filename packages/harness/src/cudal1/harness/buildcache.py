"""Content-hashed build cache for candidates that compile extensions (``load_inline``, ``load``).

Layout under the cache root (``EvalConfig.cache_dir``, default ``~/.cache/cudal1``)::

    builds/<key>/torch_extensions/   TORCH_EXTENSIONS_DIR while this candidate is loaded
    builds/<key>/build.json          {"status": "ok"|"failed", "reason", "seconds", "log_tail"}
    triton/                           TRITON_CACHE_DIR (shared; Triton keys its own cache)
    cupy/                             CUPY_CACHE_DIR (shared)

``key`` hashes the candidate source with the torch/CUDA versions and the target architectures, so a
candidate is compiled once per toolchain. A failed build is remembered too: the same source is not
rebuilt on every load, it gets ``compile_error`` at once with the recorded reason.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .types import content_hash

_NEEDS_BUILD = re.compile(r"cpp_extension|load_inline|\bload\s*\(")


def needs_build(source: str) -> bool:
    """Whether a candidate source looks like it compiles a torch extension at import."""
    return bool(_NEEDS_BUILD.search(source))


def build_key(source: str, toolchain: str, arch_list: str) -> str:
    """Cache key of a candidate: its source, the toolchain (torch + CUDA versions) and target arches."""
    return content_hash("build", source, toolchain, arch_list)[:32]


def build_dir(cache_root: Path, key: str) -> Path:
    return cache_root / "builds" / key


def extensions_dir(cache_root: Path, key: str) -> Path:
    return build_dir(cache_root, key) / "torch_extensions"


def read_record(cache_root: Path, key: str) -> dict[str, Any] | None:
    """The recorded outcome of a build, or None if this key was never built."""
    p = build_dir(cache_root, key) / "build.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def write_record(cache_root: Path, key: str, record: dict[str, Any]) -> None:
    d = build_dir(cache_root, key)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / "build.json.tmp"
    tmp.write_text(json.dumps(record, sort_keys=True))
    os.replace(tmp, d / "build.json")


def clear_stale_locks(ext_dir: Path) -> None:
    """Remove torch's build ``lock`` files left by a killed build (they would block every later load).

    Only called when no other process builds this key (the pool builds each key once, before timing)."""
    if ext_dir.is_dir():
        for lock in ext_dir.glob("*/lock"):
            try:
                lock.unlink()
            except OSError:
                pass


def extension_snapshot(ext_dir: str | Path | None) -> dict[str, float]:
    """Built extension libraries under ``ext_dir`` and their modification times."""
    if not ext_dir:
        return {}
    root = Path(ext_dir)
    if not root.is_dir():
        return {}
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.glob("*/*.so")}


def is_build_failure(exc: BaseException) -> bool:
    """Whether an exception raised while importing a candidate is a compiler/linker failure."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        text = str(e)
        if "Error building extension" in text or "ninja" in text.lower() and "build" in text.lower():
            return True
        e = e.__cause__ or e.__context__
    return False
