"""Contrastive prompts from the results store: for each task, earlier candidates with their measured scores.

Every evaluated candidate of a task (any run, same task hash) is an exemplar: its source, its status and its
speedup. ``sample_exemplars`` draws ``n`` of them from distinct score buckets, favouring fast buckets by
``exp((mean - mu) / tau)``; failed candidates (no speedup) are not drawn. The prompt is then fit to a
token budget, dropping the lowest-scored exemplars first (cudal1.prompts.fit_to_budget).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from cudal1.harness import ResultStore, Task
from cudal1.prompts import Exemplar, fit_to_budget, sample_exemplars

from .seed_data import reference_as_modelnew

__all__ = ["build_prompt_rows", "exemplars_from_store"]


def exemplars_from_store(store: ResultStore, task: Task) -> list[Exemplar]:
    """Every stored, successfully evaluated candidate of ``task`` (this exact source), newest last, one per
    distinct source (the newest measurement of a source wins)."""
    latest: dict[str, Exemplar] = {}
    for result, meta in store.rows(task=task.name):
        if result.task_hash and result.task_hash != task.hash:
            continue
        src = meta.get("candidate_source") or ""
        if not src:
            continue
        score = result.speedup if result.status == "ok" else None
        latest.pop(src, None)
        latest[src] = Exemplar(code=src, score=score, status=result.status, speedup=result.speedup)
    return list(latest.values())


def build_prompt_rows(store: ResultStore, tasks: Sequence[Task], *, n: int, tau: float, bucket_width: float,
                      rng: random.Random, count_tokens: Callable[[str], int], max_tokens: int,
                      per_task: int = 1) -> list[dict[str, Any]]:
    """Dataset rows for one GRPO round: ``per_task`` rows per task, each ``{"prompt": [user message],
    "task": name, "exemplars": k}`` with ``k`` exemplars drawn from the store. Before any candidate of a
    task succeeded, its reference rewritten as ModelNew is the one exemplar (score 1.00, by definition),
    as in the seed data's contrastive examples."""
    rows = []
    for task in tasks:
        pool = [e for e in exemplars_from_store(store, task) if e.score is not None]
        if not pool:
            pool = [Exemplar(code=reference_as_modelnew(task.source), score=1.0, status="ok", speedup=1.0)]
        for _ in range(per_task):
            chosen = sample_exemplars(pool, n=n, tau=tau, bucket_width=bucket_width, rng=rng)
            text = fit_to_budget(task.source, chosen, count_tokens, max_tokens)
            rows.append({"prompt": [{"role": "user", "content": text}], "task": task.name,
                         "exemplars": text.count("## Implementation")})
    return rows
