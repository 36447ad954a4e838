"""Candidates that build extensions (``torch.utils.cpp_extension.load_inline``): compiled before any pair runs, in
parallel, in sandboxed CPU-only workers, once per content key (:func:`cudal1.harness.buildcache.build_key`: the
source, the toolchain and the GPUs' architectures). A build's outcome is kept in the pool's cache; a failed build is
the candidate's own ``compile_error`` from then on (:mod:`cudal1.harness.pool`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from . import buildcache
from .config import EvalConfig
from .library_imports import parent_problem
from .process import WorkerGone, WorkerProcess
from .sandbox import Limits
from .types import Candidate


def toolchain() -> str:
    """What a build depends on besides its source and the GPUs: torch, CUDA and Python versions."""
    import torch

    return f"torch={torch.__version__};cuda={torch.version.cuda};py={sys.version_info[:2]}"


class Builder:
    """Builds the extensions of candidates for one pool.

    Args:
        config: the pool's settings (``compile_timeout_s`` bounds each build, parent clock).
        cache_root: the pool's cache folder (build records and each key's extensions folder under it).
        toolchain, arch_list: what a build key covers besides the source (torch, CUDA, Python; the GPUs'
            compute capabilities, ``;``-separated, empty on CPU).
        env: the build workers' environment (no GPU visible).
        sandboxed, limits: as for every candidate worker.
        hidden: the paths hidden from candidate workers now (the pool hides a result store once it is used).
        workers: concurrent build processes.
    """

    def __init__(self, config: EvalConfig, cache_root: Path, toolchain: str, arch_list: str, env: dict[str, str],
                 *, sandboxed: bool, limits: Limits, hidden: Callable[[], Sequence[Path]], workers: int) -> None:
        self.config, self.cache_root, self.toolchain, self.arch_list = config, cache_root, toolchain, arch_list
        self.env, self.sandboxed, self.limits, self.hidden, self.workers = env, sandboxed, limits, hidden, workers

    def key(self, candidate: Candidate) -> str:
        """The content key of ``candidate``'s build."""
        return buildcache.build_key(candidate.source, self.toolchain, self.arch_list)

    def build_one(self, candidate: Candidate) -> dict[str, Any]:
        """Build ``candidate`` (or read its kept record): ``{"status": "ok"|"failed"|"not_built", "reason",
        "seconds", "log_tail"}``. ``not_built`` (the worker died for another reason than the time limit) is not
        kept: the next pool tries again."""
        key = self.key(candidate)
        rec = buildcache.read_record(self.cache_root, key)
        if rec is not None:
            return rec
        ext = buildcache.extensions_dir(self.cache_root, key)
        ext.mkdir(parents=True, exist_ok=True)
        w = WorkerProcess("candidate", {**self.env, "TORCH_EXTENSIONS_DIR": str(ext)},
                          sandboxed=self.sandboxed, writable=[ext], hidden=list(self.hidden()), limits=self.limits)
        t0 = time.monotonic()
        try:
            rep = w.request("build", {"candidate_source": candidate.source, "extensions_dir": str(ext)},
                            self.config.compile_timeout_s)
            rec = {"status": rep.built_status, "reason": rep.reason, "seconds": rep.seconds}
        except WorkerGone as e:
            status = "failed" if e.ended == "timeout" else "not_built"
            rec = {"status": status, "reason": f"build {e.ended}: {e.detail}", "seconds": time.monotonic() - t0}
        rec["log_tail"] = w.log_tail()[-1500:]
        w.close()
        if rec.get("status") in ("ok", "failed"):
            buildcache.write_record(self.cache_root, key, rec)
        return rec

    def build_all(self, candidates: Iterable[Candidate]) -> dict[str, dict[str, Any]]:
        """Compile every candidate that builds extensions, in parallel, once per content key: ``{key: record}``."""
        todo: dict[str, Candidate] = {}
        for c in candidates:
            if buildcache.needs_build(c.source) and not parent_problem(c.source):
                todo.setdefault(self.key(c), c)
        if not todo:
            return {}
        with ThreadPoolExecutor(self.workers) as ex:
            recs = list(ex.map(self.build_one, todo.values()))
        return dict(zip(todo.keys(), recs, strict=True))


__all__ = ["Builder"]
