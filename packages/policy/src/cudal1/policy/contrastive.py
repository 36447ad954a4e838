"""Contrastive prompts from the results store: for each task, earlier candidates with their measured scores.

Every evaluated candidate of a task (any run, same task hash) that :func:`worth_showing` keeps is an exemplar:
its source, its status and its score, the speedup a reward pays for it (cudal1.rewards.paid_speedup: the
measured speedup when its interval lies off 1, else 1.00). ``sample_exemplars`` draws ``n`` of them from
distinct score buckets, favouring fast buckets by ``exp((mean - mu) / tau)``; failed candidates (no speedup)
are not drawn. Once the task has a real improvement (:attr:`EvalResult.improves`), every prompt shows at
least one (the best replaces the lowest drawn when the draw had none), so the reference is never the only
thing a prompt shows once something better exists. The prompt is then fit to a token budget, dropping the
lowest-scored exemplars first (cudal1.prompts.fit_to_budget).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from cudal1.harness import EvalResult, ResultStore, Task
from cudal1.harness.novelty import source_identity
from cudal1.prompts import Exemplar, fit_exemplars, sample_exemplars
from cudal1.rewards import paid_speedup

from .collection import verified
from .seed_data import reference_as_modelnew

__all__ = ["EXEMPLARS_FROM", "RowFilter", "build_prompt_rows", "behaviours_from_store", "contrastive_prompt",
           "exemplar_pool", "exemplars_from_store", "row_filter", "show_no_row", "shown_answers", "shown_behaviours",
           "worth_showing"]

RowFilter = Callable[[EvalResult, dict[str, Any]], bool]
"""``keep(result, meta)``: whether a stored row (meta as in ``ResultStore.rows``) may become an exemplar."""


def worth_showing(result: EvalResult, meta: dict[str, Any] | None = None) -> bool:
    """The default :data:`RowFilter`: failures (shown without a score) and verified successes that are not the
    reference handed back (``same_as_reference``: the reference is already the prompt's task). An 'ok'
    carrying a flag such as ``reduced_precision`` or ``exception_fallback`` is no example to follow: shown
    with its speedup it would teach the hack."""
    return result.status != "ok" or (verified(result) and "same_as_reference" not in result.flags)


def show_no_row(result: EvalResult, meta: dict[str, Any] | None = None) -> bool:
    """A :data:`RowFilter` that keeps no stored row: every prompt shows the task's reference rewritten as ModelNew
    (score 1.00) and nothing else, the prompt the held-out evaluation and the SFT data's contrastive examples use."""
    return False


#: what a GRPO or self-training prompt shows of its own task (the recipe's ``grpo.exemplars_from``): ``store``, the
#: task's earlier candidates with their measured scores (CUDA-L1's contrastive prompt; :func:`worth_showing`), or
#: ``reference``, the task's reference rewritten as ModelNew alone (:func:`show_no_row`), so that no prompt holds an
#: answer to copy and an answer the policy writes again from its weights is paid again
EXEMPLARS_FROM = {"store": worth_showing, "reference": show_no_row}


def row_filter(exemplars_from: str) -> RowFilter:
    """The :data:`RowFilter` of a recipe's ``grpo.exemplars_from`` (:data:`EXEMPLARS_FROM`). Raises ValueError for
    another name."""
    try:
        return EXEMPLARS_FROM[exemplars_from]
    except KeyError:
        raise ValueError(f"grpo.exemplars_from {exemplars_from!r}: write store (earlier candidates of the task with "
                         "their scores) or reference (the task's reference as ModelNew alone)") from None


def exemplars_from_store(store: ResultStore, task: Task, keep: RowFilter | None = None) -> list[Exemplar]:
    """Every stored, successfully evaluated candidate of ``task`` (this exact source), newest last, one per
    distinct source (the newest measurement of a source wins). ``keep`` filters the rows first (e.g. only
    those of earlier rounds)."""
    latest: dict[str, Exemplar] = {}
    for result, meta in store.rows(task=task.name):
        if result.task_hash and result.task_hash != task.hash:
            continue
        if keep is not None and not keep(result, meta):
            continue
        src = meta.get("candidate_source") or ""
        if not src:
            continue
        score = paid_speedup(result) if result.status == "ok" else None
        latest.pop(src, None)
        latest[src] = Exemplar(code=src, score=score, status=result.status, speedup=result.speedup)
    return list(latest.values())


def exemplar_pool(store: ResultStore, task: Task, keep: RowFilter | None = None) -> list[Exemplar]:
    """The scored exemplars of ``task`` in the store; before any candidate succeeded, the task's reference
    rewritten as ModelNew (score 1.00, by definition) as the one exemplar."""
    pool = [e for e in exemplars_from_store(store, task, keep) if e.score is not None]
    return pool or [Exemplar(code=reference_as_modelnew(task.source), score=1.0, status="ok", speedup=1.0)]


def contrastive_prompt(task: Task, pool: Sequence[Exemplar], *, n: int, tau: float, bucket_width: float,
                       rng: random.Random, count_tokens: Callable[[str], int], max_tokens: int,
                       menu: str = "") -> tuple[str, list[Exemplar]]:
    """One contrastive prompt for ``task``: ``n`` exemplars drawn from ``pool`` by score bucket, fit to
    ``max_tokens`` (with the op ``menu`` of a zoo action space, never cut). Returns (prompt text, the exemplars it
    shows). Raises PromptBudgetError when the task (and menu) alone do not fit."""
    chosen = sample_exemplars(pool, n=n, tau=tau, bucket_width=bucket_width, rng=rng)
    better = [e for e in pool if (e.score or 0.0) > 1.0]
    if better and not any((e.score or 0.0) > 1.0 for e in chosen):
        best = max(better, key=lambda e: e.score or 0.0)
        chosen = sorted(chosen, key=lambda e: e.score or 0.0)[1:] + [best] if len(chosen) >= n else chosen + [best]
    return fit_exemplars(task.source, chosen, count_tokens, max_tokens, menu)


def build_prompt_rows(store: ResultStore, tasks: Sequence[Task], *, n: int, tau: float, bucket_width: float,
                      rng: random.Random, count_tokens: Callable[[str], int], max_tokens: int,
                      per_task: int = 1, keep: RowFilter = worth_showing, menu: str = "") -> list[dict[str, Any]]:
    """Dataset rows for one GRPO round: ``per_task`` rows per task, each ``{"prompt": [user message],
    "task": name, "exemplars": k, "shown": [identities], "shown_behaviour": [behaviours], "shown_speedup": [x]}``
    with ``k`` exemplars drawn from the store, the identities of the verified answers among them
    (:func:`shown_answers`) and their behaviours with the speedups shown (:func:`shown_behaviours`); trl hands the
    columns to the reward function. Before any candidate of a task succeeded, its reference rewritten as ModelNew is
    the one exemplar (score 1.00, by definition), as in the seed data's contrastive examples. ``keep`` picks the rows
    that may be shown (default :func:`worth_showing`: no flagged success); ``menu``: the op menu every prompt carries
    (zoo action space)."""
    rows = []
    for task in tasks:
        pool = exemplar_pool(store, task, keep)
        behaviours = behaviours_from_store(store, task)
        for _ in range(per_task):
            text, shown = contrastive_prompt(task, pool, n=n, tau=tau, bucket_width=bucket_width, rng=rng,
                                             count_tokens=count_tokens, max_tokens=max_tokens, menu=menu)
            ids, speedups = shown_behaviours(shown, behaviours)
            rows.append({"prompt": [{"role": "user", "content": text}], "task": task.name, "exemplars": len(shown),
                         "shown": shown_answers(shown), "shown_behaviour": ids, "shown_speedup": speedups})
    return rows


def behaviours_from_store(store: ResultStore, task: Task) -> dict[str, str]:
    """Source -> behaviour (:func:`cudal1.harness.novelty.behaviour_identity`, kept by the harness in
    ``EvalResult.integrity["behaviour"]``) of every verified candidate of ``task`` in the store whose result has
    one (the newest measurement of a source wins; results stored before the harness kept it have none)."""
    out: dict[str, str] = {}
    for result, meta in store.rows(task=task.name):
        if result.task_hash and result.task_hash != task.hash:
            continue
        src, behaviour = meta.get("candidate_source") or "", result.integrity.get("behaviour")
        if src and result.status == "ok" and isinstance(behaviour, str):
            out[src] = behaviour
    return out


def shown_behaviours(shown: Sequence[Exemplar], behaviours: dict[str, str]) -> tuple[list[str], list[float]]:
    """(behaviours, speedups, x) of the verified answers among the exemplars a prompt shows whose behaviour is known
    (``behaviours``: :func:`behaviours_from_store`), in the same order: a completion that behaves as one of them is
    paid only if it measures clearly faster than that exemplar (:class:`cudal1.policy.rewarding.HarnessReward`)."""
    ids: list[str] = []
    speedups: list[float] = []
    for e in shown:
        behaviour = behaviours.get(e.code)
        shown_speedup = e.speedup if e.speedup is not None else e.score
        if e.status == "ok" and shown_speedup is not None and behaviour is not None and behaviour not in ids:
            ids.append(behaviour)
            speedups.append(float(shown_speedup))
    return ids, speedups


def shown_answers(shown: Sequence[Exemplar]) -> list[str]:
    """The identities (:func:`cudal1.harness.novelty.source_identity`) of the verified answers among the exemplars a
    prompt shows (``ok`` with a score), each once: what a completion of that prompt hands back if it copies one. (The
    reference rewritten as ModelNew is among them before a task has an answer; a copy of it is also flagged
    ``same_as_reference`` by the harness.)"""
    out = []
    for e in shown:
        if e.status == "ok" and e.score is not None:
            ident = source_identity(e.code)
            if ident is not None and ident not in out:
                out.append(ident)
    return out
