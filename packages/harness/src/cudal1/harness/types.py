"""The data that flows through cudal1: Task -> Candidate -> EvalResult.

All three are small frozen dataclasses with a JSON round trip (``to_json`` / ``from_json``), so that a
result can be stored, shipped between processes and read back without loss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .flags import excluded as flags_excluded
from .flags import improves as flags_improves
from .flags import verified as flags_verified

#: The statuses an evaluation can end in. ``ok`` is the only one that carries a speedup. ``task_error``: the
#: task itself failed to load or run its reference (never the candidate's fault).
STATUSES: tuple[str, ...] = ("ok", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "task_error")


def content_hash(*parts: str) -> str:
    """Stable sha256 hex digest of the given strings (NUL separated)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Task:
    """One reference program in the KernelBench file format.

    Attributes:
        name: the task file's stem; unique within a suite.
        source: the whole Python source of the task file (defines ``Model``, ``get_inputs``,
            ``get_init_inputs`` and module-level sizes).
        level: 1..4 where the suite has levels, else None.
        suite: the suite spec the task came from (``builtin``, ``kernelbench:/path`` ...).
        path: where the file was read from (informational; the source is what is evaluated).
    """

    name: str
    source: str
    level: int | None = None
    suite: str = ""
    path: str = ""

    @property
    def hash(self) -> str:
        """Content hash of the task source (what identifies the task in the results store)."""
        return content_hash("task", self.source)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Task:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Candidate:
    """Source code that defines ``ModelNew`` with the task's constructor and forward signature.

    Attributes:
        source: Python source defining ``class ModelNew`` (may use load_inline, Triton or CuPy).
        task: the name of the task it claims to solve.
        origin: who made it (``reference``, ``solutions:DIR``, ``policy``, ``teacher:MODEL`` ...).
        parent_ids: hashes of candidates it was derived from (for contrastive search lineage).
    """

    source: str
    task: str = ""
    origin: str = ""
    parent_ids: tuple[str, ...] = ()

    @property
    def hash(self) -> str:
        """Content hash of the candidate source."""
        return content_hash("candidate", self.source)

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["parent_ids"] = list(self.parent_ids)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> Candidate:
        d = json.loads(text)
        d["parent_ids"] = tuple(d.get("parent_ids", ()))
        return cls(**d)


@dataclass(frozen=True)
class EvalResult:
    """The verdict on one (task, candidate) pair.

    Attributes:
        task: task name.
        status: one of :data:`STATUSES`.
        reason: a sentence a person can act on ("" when status is ok and nothing was flagged).
        speedup: reference time / candidate time, median of bucket ratios, rounded toward 1 at two
            decimals (x); None unless status is ok.
        speedup_ci: 95% bootstrap confidence interval of the unrounded speedup (x), or None.
        ref_ms: reference (in the chosen baseline mode) time per call, median of bucket means (ms).
        cand_ms: candidate time per call, median of bucket means (ms).
        flags: named integrity/measurement findings, e.g. ``timing_unstable``, ``gpu_throttled``.
        baseline: how the reference was run for timing (``eager``, ``compile``, ...).
        device: ``cpu`` or ``cuda``.
        task_hash, candidate_hash: content hashes (the store's keys).
        correctness: trials, tolerances (atol, rtol) and max_abs_err / max_rel_err over all trials.
        timing: protocol details: rounds, buckets, bucket means (ms), spread, attempts.
        environment: GPU name, compute capability, driver, versions, clocks and throttle reasons.
        build: build-cache facts: key, whether a build ran in this evaluation, build seconds; ``library_digest``:
            the hash of the kernel-library code the candidate imported (:func:`cudal1.harness.techniques.library_digest`).
        uses_custom_kernel: True when a CUDA/Triton/CuPy kernel of the candidate's own ran on the GPU
            (profiled), False when only library/PyTorch kernels ran (or on CPU), None when unknown.
        integrity: evidence behind the flags: static findings, task check, kernels seen, switches.
        log_tail: the last lines the candidate printed (never parsed, for humans only).
        wall_s: seconds the parent process spent on the pair (its own clock).
    """

    task: str
    status: str
    reason: str = ""
    speedup: float | None = None
    speedup_ci: tuple[float, float] | None = None
    ref_ms: float | None = None
    cand_ms: float | None = None
    flags: tuple[str, ...] = ()
    baseline: str = "eager"
    device: str = "cpu"
    task_hash: str = ""
    candidate_hash: str = ""
    correctness: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    uses_custom_kernel: bool | None = None
    integrity: dict[str, Any] = field(default_factory=dict)
    log_tail: str = ""
    wall_s: float | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"EvalResult.status must be one of {STATUSES}, got {self.status!r}")
        if self.status != "ok" and self.speedup is not None:
            raise ValueError("only an 'ok' result may carry a speedup")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def verified(self) -> bool:
        """Whether this result may be trusted as a working solution with the speedup it reports: status ``ok``
        and no flag of kind reject, suspect or task (:func:`cudal1.harness.flags.verified`, the one rule every
        consumer reads)."""
        return flags_verified(self.status, self.flags)

    @property
    def improves(self) -> bool:
        """Whether this result is a real improvement (:func:`cudal1.harness.flags.improves`): verified, not the
        reference handed back, and the lower bound of its speedup's confidence interval above 1."""
        return flags_improves(self.status, self.flags, self.speedup_ci)

    @property
    def excluded(self) -> bool:
        """Whether this result is left out of aggregate figures (a task flag: degenerate or failing task)."""
        return self.status == "task_error" or flags_excluded(self.flags)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["flags"] = list(self.flags)
        d["speedup_ci"] = list(self.speedup_ci) if self.speedup_ci is not None else None
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvalResult:
        known = {f.name for f in dataclasses.fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        d["flags"] = tuple(d.get("flags", ()))
        ci = d.get("speedup_ci")
        d["speedup_ci"] = tuple(ci) if ci is not None else None
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> EvalResult:
        return cls.from_dict(json.loads(text))

    def replace(self, **changes: Any) -> EvalResult:
        return dataclasses.replace(self, **changes)
