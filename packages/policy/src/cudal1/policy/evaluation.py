"""The evaluation stage: how well the policy does on tasks it never trained on, measured the same way after
every stage (``base`` before any training, then ``sft``, ``self_train``, ``grpo``).

Per held-out task the policy writes ``k`` completions to one prompt (the contrastive prompt with the task's
reference as its one exemplar: a held-out task has no earlier solutions), each measured by the harness into
the evaluation's own store (``evaluation.sqlite``, never read by a training stage). Figures
(:func:`summarise`):

* ``correct_at_1``: fraction of tasks whose first completion is verified (:attr:`EvalResult.verified`);
* ``novel_correct_rate``: fraction of all completions verified and not the reference handed back;
* ``best_of_k_geomean``: geometric mean over tasks of the best paid speedup of a task's verified, novel
  completions (cudal1.rewards.paid_speedup; 1.0 when none: the reference stays in use), with a bootstrap
  95% CI over tasks (``best_of_k_ci``);
* ``improved_fraction``: fraction of tasks with a completion that improves (speedup interval above 1).

Written to ``evaluation/<stage>.json`` in the run folder, to metrics.jsonl (event ``evaluation``) and every
completion to completions.jsonl (stage ``evaluation:<stage>``).
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cudal1.harness import Candidate, EvalResult, Task
from cudal1.prompts import Exemplar
from cudal1.rewards import paid_speedup

from .backends.base import SamplingParams
from .rewarding import append_jsonl, completion_row, parse_completion
from .run_log import RunDir
from .seed_data import reference_as_modelnew

__all__ = ["evaluate_stage", "summarise"]


def _novel_ok(r: EvalResult | None) -> bool:
    return r is not None and r.verified and "same_as_reference" not in r.flags


def summarise(samples: Mapping[str, Sequence[EvalResult | None]], *, bootstrap: int = 2000,
              seed: int = 0) -> dict[str, Any]:
    """Figures of one evaluation (see the module docstring). ``samples``: task -> one EvalResult per
    completion in sampling order (None: the completion had no code)."""
    tasks = sorted(samples)
    if not tasks:
        raise ValueError("no held-out task to summarise: the evaluation needs at least one task")
    n_all = sum(len(v) for v in samples.values())
    best = {}
    for t in tasks:
        sp = [paid_speedup(r) for r in samples[t] if _novel_ok(r)]
        best[t] = max(sp) if sp else 1.0
    logs = [math.log(best[t]) for t in tasks]
    rng = random.Random(seed)
    boots = sorted(math.exp(statistics.fmean(rng.choice(logs) for _ in logs)) for _ in range(max(bootstrap, 1)))
    lo, hi = boots[int(0.025 * (len(boots) - 1))], boots[int(0.975 * (len(boots) - 1))]
    return {
        "tasks": len(tasks), "completions": n_all,
        "correct_at_1": sum(bool(samples[t]) and samples[t][0] is not None and samples[t][0].verified
                            for t in tasks) / len(tasks),
        "novel_correct_rate": sum(_novel_ok(r) for t in tasks for r in samples[t]) / max(n_all, 1),
        "best_of_k_geomean": math.exp(statistics.fmean(logs)), "best_of_k_ci": [lo, hi],
        "improved_fraction": sum(any(r is not None and r.improves for r in samples[t]) for t in tasks) / len(tasks),
        "best_per_task": best,
        "statuses": {t: [r.status if r is not None else "no_code" for r in samples[t]] for t in tasks},
    }


def evaluation_prompt(task: Task, menu: str = "") -> list[dict[str, str]]:
    """The evaluation's prompt for ``task``: the contrastive prompt with the reference as its one exemplar (and
    the op ``menu`` of the recipe's action space, when it has one)."""
    from cudal1.prompts import render_contrastive

    ref = Exemplar(code=reference_as_modelnew(task.source), score=1.0, status="ok", speedup=1.0)
    return [{"role": "user", "content": render_contrastive(task.source, [ref], menu)}]


def evaluate_stage(stage: str, generate: Callable[[list, SamplingParams], list[list[str]]], tasks: Sequence[Task],
                   evaluate: Callable[..., list[EvalResult]], run: RunDir, *, samples_per_task: int,
                   max_new_tokens: int, temperature: float, seed: int, bootstrap: int = 2000,
                   log: Callable[[str], Any] = lambda s: None, menu: str = "") -> dict[str, Any]:
    """Evaluate the policy behind ``generate(prompts, params)`` on held-out ``tasks``; returns the figures
    (also written to the run folder, see the module docstring)."""
    t0 = time.monotonic()
    prompts = [evaluation_prompt(t, menu) for t in tasks]
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=temperature, n=samples_per_task, seed=seed)
    texts = generate(prompts, params)
    if len(texts) != len(prompts) or any(not isinstance(t, list) or not t for t in texts):
        raise RuntimeError(f"the generation backend returned {len(texts)} answer lists for {len(prompts)} prompts "
                           f"(or an empty one): expected {samples_per_task} completions per prompt; check the backend")
    gen_s = time.monotonic() - t0
    pairs: list[tuple[Task, Candidate]] = []
    where: list[tuple[int, int]] = []
    parsed_all = []
    for i, (task, outs) in enumerate(zip(tasks, texts, strict=True)):
        for j, text in enumerate(outs):
            p = parse_completion(text)
            parsed_all.append((i, j, text, p))
            if p.code is not None:
                pairs.append((task, Candidate(p.code, task.name, origin=f"policy:evaluation:{stage}")))
                where.append((i, j))
    # said before the harness starts, so a run stopped during it still tells where its time went
    run.log("evaluation_generated", stage=stage, completions=len(parsed_all), with_code=len(pairs),
            generation_s=round(gen_s, 3))
    log(f"evaluation of {stage}: {len(parsed_all)} completions generated in {gen_s:.0f} s, {len(pairs)} with code "
        f"go to the harness")
    results = evaluate(pairs, run=f"{run.path.name}:evaluation:{stage}") if pairs else []
    got: dict[tuple[int, int], EvalResult] = dict(zip(where, results, strict=True))
    samples = {t.name: [got.get((i, j)) for j in range(len(texts[i]))] for i, t in enumerate(tasks)}
    fig = summarise(samples, bootstrap=bootstrap, seed=seed)
    fig.update(stage=stage, seconds=time.monotonic() - t0, generation_s=gen_s,
               format_rate=sum(p.well_formed for *_, p in parsed_all) / max(len(parsed_all), 1))
    rows = [completion_row(f"evaluation:{stage}", tasks[i].name, prompts[i], text, p, got.get((i, j)))
            for i, j, text, p in parsed_all]
    if run.is_main:
        append_jsonl(run.path / "completions.jsonl", rows)
        out = run.path / "evaluation"
        out.mkdir(exist_ok=True)
        (out / f"{stage}.json").write_text(json.dumps(fig, indent=2) + "\n")
    run.log("evaluation", **{k: v for k, v in fig.items() if k != "statuses"})
    log(f"evaluation after {stage}: correct@1 {fig['correct_at_1']:.2f}, novel-correct {fig['novel_correct_rate']:.2f}, "
        f"best-of-{samples_per_task} geomean {fig['best_of_k_geomean']:.3f}x "
        f"[{fig['best_of_k_ci'][0]:.3f}, {fig['best_of_k_ci'][1]:.3f}], improved {fig['improved_fraction']:.2f} "
        f"({len(tasks)} held-out tasks, {fig['seconds']:.0f} s)")
    return fig
