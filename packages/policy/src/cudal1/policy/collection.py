"""Stage-1 data collection: ask teacher backends for solutions of each task and keep only the ones the
harness verifies.

Per task, teachers are asked in turn (one completion per attempt, the one-shot prompt) until ``successes``
verified solutions exist or ``max_attempts`` attempts were made (CUDA-L1: up to 20 attempts, stop after 2
successes). A solution is kept when the harness verifies it (:attr:`EvalResult.verified`) and it is not the
reference handed back (``same_as_reference``: a copy would teach the policy to copy; counted as
``same_as_reference`` in the statuses).
Every attempt's EvalResult goes to the results store as it is measured; every verified solution is appended
to the output JSONL at once (cudal1.policy.seed_data format), so an interrupted collection keeps its data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudal1.harness import Candidate, EvalResult, Task
from cudal1.harness.flags import kind_of
from cudal1.prompts import render_one_shot

from .backends.base import GenerationBackend, SamplingParams
from .rewarding import parse_completion
from .seed_data import examples_for, write_jsonl

__all__ = ["CollectionReport", "collect", "verified"]


def verified(result: EvalResult) -> bool:
    """Whether a result counts as a verified solution: :attr:`EvalResult.verified`, the harness's one rule
    (status ok, no flag of kind reject, suspect or task in cudal1.harness.flags)."""
    return result.verified


@dataclass
class CollectionReport:
    """Per task: attempts made, verified solutions kept, statuses seen."""

    attempts: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0


def collect(tasks: Sequence[Task], teachers: Sequence[GenerationBackend],
            evaluate: Callable[..., list[EvalResult]], out_path: str | Path, *, max_attempts: int = 20,
            successes: int = 2, params: SamplingParams | None = None, run: str = "collect",
            log: Callable[[str], Any] = lambda s: None) -> CollectionReport:
    """Collect verified teacher solutions for ``tasks`` into ``out_path`` (appended). See the module docstring."""
    if not teachers:
        raise ValueError("collect needs at least one teacher backend (e.g. openai:http://localhost:8000/v1#MODEL)")
    if max_attempts < 1 or successes < 1:
        raise ValueError("max_attempts and successes must be >= 1")
    params = params or SamplingParams(max_new_tokens=2048, temperature=0.7, n=1)
    report = CollectionReport()
    t0 = time.monotonic()
    for task in tasks:
        prompt = [{"role": "user", "content": render_one_shot(task.source)}]
        kept = attempts = 0
        seen: set[str] = set()
        statuses: dict[str, int] = {}
        while kept < successes and attempts < max_attempts:
            teacher = teachers[attempts % len(teachers)]
            attempts += 1
            text = teacher.generate([prompt], params)[0][0]
            parsed = parse_completion(text)
            if parsed.code is None:
                statuses["no_code"] = statuses.get("no_code", 0) + 1
                continue
            if parsed.code in seen:
                statuses["duplicate"] = statuses.get("duplicate", 0) + 1
                continue
            seen.add(parsed.code)
            (result,) = evaluate([(task, Candidate(parsed.code, task.name, origin=f"teacher:{teacher.name}"))], run=run)
            status = "same_as_reference" if verified(result) and "same_as_reference" in result.flags else result.status
            if status == "ok" and not verified(result):  # ok, but a flag keeps it from being trusted: say which
                status = "ok but " + "+".join(f for f in result.flags if kind_of(f) in ("reject", "suspect", "task"))
            statuses[status] = statuses.get(status, 0) + 1
            if status == "ok" and verified(result):
                kept += 1
                write_jsonl(out_path, examples_for(task, parsed.code, f"teacher:{teacher.name}"), append=True)
        report.attempts[task.name], report.kept[task.name], report.statuses[task.name] = attempts, kept, statuses
        log(f"{task.name}: {kept} verified of {attempts} attempts {statuses}")
    report.seconds = time.monotonic() - t0
    return report
