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
import shutil
import stat
import threading
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


CACHE_COPY_LIMIT = 512 << 20


def _write_beside(target: Path, fd: int) -> None:
    """Write what ``fd`` holds to ``target`` through a new file renamed over it: a file already at ``target`` is
    replaced, never rewritten in place. A process may have that file mapped (a worker that compiled the harness's
    digest kernel before its cache was seeded has the kernel's launcher library loaded from it), and rewriting a
    mapped library under a running process crashes it (SIGSEGV); a link at ``target`` is replaced, not followed."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(out, "wb") as fout, os.fdopen(os.dup(fd), "rb") as fin:
            shutil.copyfileobj(fin, fout)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _copy_regular_files(src: Path, dst: Path, limit: int = CACHE_COPY_LIMIT, skip: Path | None = None) -> int:
    """Copy the regular files under ``src`` to ``dst`` (links, devices and FIFOs skipped; nothing followed;
    at most ``limit`` bytes; none whose path relative to ``src`` exists under ``skip``). Returns the bytes
    copied."""
    copied = 0
    if not src.is_dir() or src.is_symlink():
        return 0
    for root, dirs, files in os.walk(src, followlinks=False):
        rel = Path(root).relative_to(src)
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
        for name in files:
            p = Path(root) / name
            if skip is not None and (skip / rel / name).exists():
                continue
            try:
                fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or copied + st.st_size > limit:
                    continue
                target = dst / rel / name
                target.parent.mkdir(parents=True, exist_ok=True)
                _write_beside(target, fd)
                copied += st.st_size
            except OSError:
                continue
            finally:
                os.close(fd)
    return copied


#: the harness's own Triton kernels (a compiled kernel's cache entry holds files named after it)
HARNESS_KERNELS = ("_digest_sums_kernel",)


def harness_kernel_entries(triton_cache: Path) -> list[Path]:
    """The entries of Triton cache ``triton_cache`` (one folder per compiled kernel or launcher) that hold one of
    :data:`HARNESS_KERNELS` or a shared object (the launchers Triton builds with the C compiler)."""
    out: list[Path] = []
    if not triton_cache.is_dir() or triton_cache.is_symlink():
        return out
    for entry in sorted(triton_cache.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and any(
                f.name.split(".")[0] in HARNESS_KERNELS or f.name.endswith(".so") for f in entry.iterdir()):
            out.append(entry)
    return out


def seed_cache(persistent: Path, worker_cache: Path, trusted: Path | None = None) -> None:
    """Give a candidate worker a copy of its source's persistent kernel cache before the candidate loads, then the
    harness's kernels from ``trusted``, a cache root laid out like a worker's (the reference processes':
    ``triton/`` holds the digest kernel compiled for the task's outputs, which a fresh candidate process would
    otherwise compile in its first trial; :func:`harness_kernel_entries`). Trusted entries are copied last, so
    that a file the candidate's earlier runs left under the same name never replaces them; the candidate may change
    its own copy, which no other process reads."""
    worker_cache.mkdir(parents=True, exist_ok=True)
    _copy_regular_files(persistent, worker_cache)
    if trusted is not None:
        for entry in harness_kernel_entries(trusted / "triton"):
            _copy_regular_files(entry, worker_cache / "triton" / entry.name)


def keep_cache(worker_cache: Path, persistent: Path, trusted: Path | None = None) -> None:
    """Keep what a candidate worker compiled for the next evaluation of the same source (regular files only;
    only that source's workers ever get them back), less what :func:`seed_cache` gave it from ``trusted``
    (given afresh each time)."""
    if worker_cache.is_dir():
        _copy_regular_files(worker_cache, persistent, skip=trusted)
