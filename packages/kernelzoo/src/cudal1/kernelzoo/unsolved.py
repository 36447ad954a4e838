"""Why a task of a solution set has no solution file: the set's ``unsolved.json``, one entry per task of the
benchmark that the set does not solve (issue 18: "where no solution beats eager, ... say why").

A set ships a file only for a task where a solution was measured faster than eager (a file that restates the
reference is not shipped). Every other task of the benchmark has an entry here: a reason code
(:data:`REASONS`), a sentence of why, what the reference costs on the release's GPU and what fraction of the
roofline that is, and every attempt the release's results store holds for the task (eager baseline; the store
keeps each attempt's source). :func:`unaccounted` checks that every task of the benchmark is either solved or
explained, never both; ``cudal1-eval --solutions kernelbench-v0`` counts the tasks without a file and names this
file.

The measured fields are written from the stores by ``benchmarks/scripts/kb_unsolved.py``; the reason and the
sentence are written by hand. ::

    from cudal1.kernelzoo.unsolved import unsolved

    entry = unsolved("kernelbench-v0")["19_ReLU"]
    entry.reason, entry.why, entry.reference_ms, entry.reference_roofline
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .solutions import set_dir

__all__ = ["REASONS", "Attempt", "Unsolved", "load", "unaccounted", "unsolved", "unsolved_path"]

#: reason code -> what it means; every entry of an ``unsolved.json`` names one
REASONS: dict[str, str] = {
    "fp32_gemm": "one cuBLAS fp32 GEMM (TF32 off): the zoo's exact-fp32 matmul kernels ran slower than cuBLAS, and "
                 "TF32 / bf16 splits are below the task's precision (its roofline fraction is against cuBLAS's own "
                 "fp32 rate on an 8192^3 GEMM, the measured peak)",
    "copy_rate": "one eager kernel that already moves the task's bytes near the GPU's copy rate",
    "launch_bound": "one eager kernel whose call costs about the harness's per-call floor: a kernel of our own "
                    "adds the same allocation and launch, and nothing measured beat it",
    "no_faster_kernel": "eager (cuBLAS, cuDNN or ATen) is not at a hardware limit here, but every kernel tried measured "
                        "at parity or slower through the harness",
    "pending_release_gpu": "a candidate in pending/ verified faster than eager on a GPU other than the release's; it "
                           "has not been measured on the release's GPU (an H100) yet",
    "task_degenerate": "the harness finds the task's output constant or input-independent: left out of every average",
}


@dataclass(frozen=True)
class Attempt:
    """One stored measurement of a candidate for the task (eager baseline): its UTC date, harness status, speedup
    over eager with its 95% CI, both times (ms a call), the result's flags and whether the harness verified it
    (:func:`cudal1.harness.flags.verified`)."""

    measured: str
    status: str
    speedup: float | None
    ci: tuple[float, float] | None
    reference_ms: float | None
    ours_ms: float | None
    flags: tuple[str, ...]
    verified: bool


@dataclass(frozen=True)
class Unsolved:
    """Why ``task`` has no file in the set. ``reference_ms``: the reference's time a call through the harness on
    the release's GPU (``reference_from`` says which store), None if it was never timed there;
    ``reference_roofline``: the roofline's time for the task's FLOPs and ideal bytes over ``reference_ms`` (0..1;
    None when unknown); ``attempts``: oldest first; ``pending``: a candidate waits in the set's ``pending/``."""

    task: str
    reason: str
    why: str
    reference_ms: float | None
    reference_from: str
    reference_roofline: float | None
    attempts: tuple[Attempt, ...]
    pending: bool

    @property
    def best(self) -> Attempt | None:
        """The verified attempt with the highest speedup, or None."""
        ok = [a for a in self.attempts if a.verified and a.speedup is not None]
        return max(ok, key=lambda a: a.speedup or 0.0) if ok else None


def unsolved_path(solution_set: str = "kernelbench-v0") -> Path:
    """The set's ``unsolved.json`` (it need not exist: a set that solves every task has none)."""
    return set_dir(solution_set) / "unsolved.json"


def load(path: Path, pending_dir: Path | None = None) -> dict[str, Unsolved]:
    """Entries of one ``unsolved.json``; ``ValueError`` naming the task and field on a malformed entry."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, Unsolved] = {}
    for task, e in doc.get("tasks", {}).items():
        try:
            attempts = tuple(
                Attempt(measured=a["measured"], status=a["status"], speedup=a.get("speedup"),
                        ci=tuple(a["ci"]) if a.get("ci") else None,  # type: ignore[arg-type]
                        reference_ms=a.get("reference_ms"), ours_ms=a.get("ours_ms"),
                        flags=tuple(a.get("flags", ())), verified=bool(a["verified"]))
                for a in e.get("attempts", ()))
            out[task] = Unsolved(task=task, reason=e["reason"], why=e["why"], reference_ms=e.get("reference_ms"),
                                 reference_from=e.get("reference_from", ""),
                                 reference_roofline=e.get("reference_roofline"), attempts=attempts,
                                 pending=bool(pending_dir and (pending_dir / f"{task}.py").exists()))
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}: entry {task!r} lacks or mistypes {err}: each entry needs reason, why, "
                             f"reference_from and attempts (see cudal1.kernelzoo.unsolved)") from err
    return out


def unsolved(solution_set: str = "kernelbench-v0") -> dict[str, Unsolved]:
    """Task -> why the set has no file for it ({} for a set without an ``unsolved.json``)."""
    path = unsolved_path(solution_set)
    return load(path, path.parent / "pending") if path.exists() else {}


def unaccounted(task_names: Iterable[str], solved: Iterable[str], explained: dict[str, Unsolved]) -> list[str]:
    """What is wrong with a set's account of a benchmark, one line each (empty: every task is solved or
    explained, never both): a task of ``task_names`` with neither a file (``solved``) nor an entry
    (``explained``), an entry for a task that has a file or that the benchmark does not have, an unknown reason
    code, an empty sentence, a roofline fraction outside 0..1."""
    names, files = set(task_names), set(solved)
    problems = [f"{t}: no solution file and no entry saying why" for t in sorted(names - files - set(explained))]
    for t, e in sorted(explained.items()):
        if t in files:
            problems.append(f"{t}: has a solution file and an entry saying why it has none (remove the entry)")
        if t not in names:
            problems.append(f"{t}: explained, but the benchmark has no such task")
        if e.reason not in REASONS:
            problems.append(f"{t}: unknown reason {e.reason!r} (one of {', '.join(REASONS)})")
        if not e.why.strip():
            problems.append(f"{t}: the entry does not say why")
        if e.reference_roofline is not None and not 0.0 <= e.reference_roofline <= 1.0:
            problems.append(f"{t}: reference roofline fraction {e.reference_roofline} is outside 0..1")
    return problems

