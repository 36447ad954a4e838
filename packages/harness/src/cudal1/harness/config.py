"""Evaluation settings: one frozen dataclass, the same defaults for the API, the pool and the CLI."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .types import content_hash

BASELINES: tuple[str, ...] = ("eager", "compile", "compile-reduce-overhead", "cudagraph", "cudnn")
#: version of the evaluation protocol; part of every config key, so results of an older protocol are not reused
PROTOCOL_VERSION = 2
#: Baselines that only exist on a CUDA device.
CUDA_ONLY_BASELINES: frozenset[str] = frozenset({"cudagraph", "cudnn", "compile-reduce-overhead"})


def default_cache_dir() -> Path:
    """Where compiled candidate builds are cached (``$CUDAL1_CACHE`` or ``~/.cache/cudal1``)."""
    import os

    env = os.environ.get("CUDAL1_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "cudal1"


@dataclass(frozen=True)
class EvalConfig:
    """How one (task, candidate) pair is evaluated.

    Correctness:
        trials: correctness trials, each with a fresh seed and freshly drawn inputs (>= 5).
        seed: base seed; trial i uses ``seed + 1000 * i``; parameters are randomised from ``seed``.
        rtol, atol: override the per-dtype tolerances of :mod:`cudal1.harness.tolerance` (None: use them).
    Timing (see :mod:`cudal1.harness.timing`):
        warmup: untimed calls of each model before timing (whole batches, at least one).
        buckets: timed calls are grouped into this many consecutive buckets.
        min_rounds, max_rounds: paired rounds per attempt (each round times one batch of the reference and
            one of the candidate, in random order, on the same fresh inputs); the count is chosen to fill
            ``time_budget_s`` (an attempt that is not stable is repeated with twice the rounds).
        time_budget_s: target seconds of timed work per attempt (both models together).
        max_spread: largest accepted (max - min) / median of bucket means; beyond it, re-measure.
        attempts: measurement attempts before the result is kept with the ``timing_unstable`` flag.
        input_sets: most calls in one timed batch, each on its own freshly drawn input set (fewer for calls
            that are long, or when the inputs and outputs would take more than a third of the free GPU memory).
    Limits:
        compile_timeout_s: seconds for loading the candidate (import, builds, construction).
        run_timeout_s: seconds for correctness and timing after loading.
    Other:
        device: ``cpu`` or ``cuda`` (``cuda:N`` pins a GPU; the pool pins workers itself).
        baseline: how the reference is run for timing: one of :data:`BASELINES`.
        cache_dir: build cache root (None: :func:`default_cache_dir`).
        cpu_threads: torch intra-op threads in CPU workers (None: torch's default). One thread gives
            steadier CPU timings on a loaded machine.
        require_sandbox: refuse to run candidates where no OS sandbox can be made (else they run without one
            and every result is flagged ``unsandboxed``).
        memory_limit_gb: resident memory one worker may hold (GiB; None: half the machine, at least 8).
    """

    device: str = "cpu"
    baseline: str = "eager"
    trials: int = 5
    seed: int = 20261122
    rtol: float | None = None
    atol: float | None = None
    warmup: int = 3
    buckets: int = 5
    min_rounds: int = 10
    max_rounds: int = 100
    time_budget_s: float = 1.5
    max_spread: float | None = None
    attempts: int = 3
    input_sets: int = 32
    compile_timeout_s: float = 300.0
    run_timeout_s: float = 300.0
    cache_dir: str | None = None
    cpu_threads: int | None = None
    require_sandbox: bool = False
    memory_limit_gb: float | None = None

    def __post_init__(self) -> None:
        if self.baseline not in BASELINES:
            raise ValueError(f"unknown baseline {self.baseline!r}; choose one of {', '.join(BASELINES)}")
        dev = self.device.split(":")[0]
        if dev not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")
        if dev == "cpu" and self.baseline in CUDA_ONLY_BASELINES:
            raise ValueError(f"baseline {self.baseline!r} needs a CUDA device; use --device cuda or another baseline")
        if self.trials < 1:
            raise ValueError("trials must be >= 1")
        if self.buckets < 2 or self.min_rounds < self.buckets:
            raise ValueError("need buckets >= 2 and min_rounds >= buckets")
        if self.input_sets < 1:
            raise ValueError("input_sets must be >= 1")
        if self.memory_limit_gb is not None and not self.memory_limit_gb > 0:
            raise ValueError("memory_limit_gb must be positive (GiB)")

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def spread_limit(self) -> float:
        """Accepted bucket spread: 10% on a GPU, 30% on a CPU (wall clocks on a shared machine)."""
        if self.max_spread is not None:
            return self.max_spread
        return 0.10 if self.is_cuda else 0.30

    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir else default_cache_dir()

    def key(self) -> str:
        """Hash of the settings that change what a result means (not limits or cache paths)."""
        d = dataclasses.asdict(self)
        for k in ("compile_timeout_s", "run_timeout_s", "cache_dir", "require_sandbox", "memory_limit_gb"):
            d.pop(k)
        d["device"] = self.device.split(":")[0]
        d["protocol"] = PROTOCOL_VERSION
        return content_hash("config", json.dumps(d, sort_keys=True))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvalConfig:
        return cls(**d)

    def replace(self, **changes: Any) -> EvalConfig:
        return dataclasses.replace(self, **changes)
