"""A training run's folder: ``runs/<timestamp>/`` with the resolved recipe, metrics, results, checkpoint and
summary. Everything measured is appended to disk the moment it exists (metrics.jsonl is flushed per line;
the results store is SQLite), so a crash loses nothing already measured and ``--resume`` can continue.

Layout::

    config.yaml        the resolved recipe (with overrides applied)
    metrics.jsonl      one JSON object per event: {"event": "sft"|"grpo_step"|"self_train"|..., ...}
    results.sqlite     every harness result of the run (cudal1.harness.ResultStore)
    checkpoint/        the latest policy (model + tokenizer; LoRA adapters when LoRA is on)
    state.json         progress for resume: {"stage": ..., "round": ...}
    summary.md         human summary written at the end
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["RunDir", "peak_rss_gib"]


def peak_rss_gib() -> dict[str, float]:
    """Peak resident memory (GiB) of this process and of its largest finished child (harness workers)."""
    scale = 1024 ** 3 if sys.platform == "darwin" else 1024 ** 2  # ru_maxrss: bytes on macOS, KiB on Linux
    return {"self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale,
            "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale}


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


class RunDir:
    """One run folder (created if missing). ``RunDir.new(root)`` makes ``root/<UTC timestamp>``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.t0 = time.monotonic()
        #: process rank under torchrun/accelerate (0 alone): rank 0 owns state.json and metrics.jsonl, other
        #: ranks log to metrics.rank<N>.jsonl (each rank's reward function sees its own completions)
        self.rank = int(os.environ.get("RANK", "0"))

    @classmethod
    def new(cls, root: str | Path) -> RunDir:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path, k = Path(root) / stamp, 1
        while path.exists():
            k += 1
            path = Path(root) / f"{stamp}-{k}"
        return cls(path)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def metrics_path(self) -> Path:
        return self.path / ("metrics.jsonl" if self.rank == 0 else f"metrics.rank{self.rank}.jsonl")

    @property
    def store_path(self) -> Path:
        return self.path / "results.sqlite"

    @property
    def checkpoint(self) -> Path:
        return self.path / "checkpoint"

    def log(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one event to metrics.jsonl (with wall time since the run started) and return it."""
        rec = {"event": event, "t_s": round(time.monotonic() - self.t0, 3), **_clean(fields)}
        if self.rank:
            rec["rank"] = self.rank
        with open(self.metrics_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return rec

    def events(self, event: str | None = None) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        out = [json.loads(line) for line in self.metrics_path.read_text().splitlines() if line.strip()]
        return [e for e in out if event is None or e.get("event") == event]

    def state(self) -> dict[str, Any]:
        p = self.path / "state.json"
        return json.loads(p.read_text()) if p.exists() else {}

    def save_state(self, **state: Any) -> None:
        if not self.is_main:
            return
        p = self.path / "state.json"
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps({**self.state(), **state}, indent=1))
        os.replace(tmp, p)
