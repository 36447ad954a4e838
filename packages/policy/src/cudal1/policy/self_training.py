"""Stage 2: self-training. Each round: the policy samples solutions for every task (contrastive prompts
built from the results store), the harness measures them, and the policy is fine-tuned on its own outputs
that are real improvements (:attr:`EvalResult.improves`: verified, not the reference handed back, speedup
interval above 1), at least ``min_speedup``, and new (a normalised source, cudal1.harness.novelty, that no
earlier round kept). Every completion goes to the run's completions.jsonl (stage ``self_train:<round>``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from cudal1.harness import Candidate, EvalResult, ResultStore, Task
from cudal1.harness.novelty import normalised_source

from .action_space import menu_text
from .backends.base import SamplingParams
from .backends.transformers_local import TransformersBackend
from .contrastive import build_prompt_rows, row_filter
from .recipe import Recipe
from .rewarding import append_jsonl, completion_row, parse_completion
from .run_log import RunDir, peak_rss_gib
from .sft import run_sft

__all__ = ["self_train"]


def self_train(model: Any, tokenizer: Any, recipe: Recipe, tasks: Sequence[Task], store: ResultStore,
               evaluate: Callable[..., list[EvalResult]], run: RunDir, *, start_round: int = 0) -> Any:
    """Run ``recipe.self_train.rounds`` rounds from ``start_round``; returns the fine-tuned model."""
    st = recipe.self_train
    rng = random.Random(recipe.seed + 104729 * start_round)
    kept_sources: set[str] = set()
    for r in range(start_round, st.rounds):
        t0 = time.monotonic()
        rows = build_prompt_rows(store, list(tasks), n=recipe.grpo.exemplars, tau=recipe.grpo.tau,
                                 bucket_width=recipe.grpo.bucket_width, rng=rng,
                                 count_tokens=lambda s: len(tokenizer(s, add_special_tokens=False)["input_ids"]),
                                 max_tokens=recipe.grpo.prompt_budget_tokens, menu=menu_text(recipe.action_space),
                                 keep=row_filter(recipe.grpo.exemplars_from))
        backend = TransformersBackend(model, tokenizer, batch_size=recipe.policy.generation_batch,
                                      merge_adapters=recipe.policy.merge_for_generation)
        params = SamplingParams(max_new_tokens=st.max_new_tokens, temperature=st.temperature, n=st.samples_per_task,
                                seed=recipe.seed + r)
        outputs = backend.generate([row["prompt"] for row in rows], params)
        by_name = {t.name: t for t in tasks}
        pairs, sources, log_rows = [], [], []
        for row, texts in zip(rows, outputs, strict=True):
            for text in texts:
                parsed = parse_completion(text)
                sources.append((row, text, parsed))
                if parsed.code is not None:
                    task = by_name[row["task"]]
                    pairs.append((task, Candidate(parsed.code, task.name, origin="policy:self_train")))
        results = iter(evaluate(pairs, run=f"{run.path.name}:self_train{r}") if pairs else [])
        keep, measured = [], []
        for row, text, parsed in sources:
            res = next(results) if parsed.code is not None else None
            log_rows.append(completion_row(f"self_train:{r}", row["task"], row["prompt"], text, parsed, res))
            if res is None:
                continue
            measured.append(res)
            norm = normalised_source(parsed.code or "") or parsed.code
            if res.improves and (res.speedup or 0.0) >= st.min_speedup and norm not in kept_sources:
                kept_sources.add(norm)
                keep.append({"prompt": row["prompt"], "completion": [{"role": "assistant", "content": text}]})
        if run.is_main:
            append_jsonl(run.path / "completions.jsonl", log_rows)
        figures: dict[str, Any] = {"round": r, "samples": sum(len(t) for t in outputs),
                                   "well_formed": sum(parsed.well_formed for _, _, parsed in sources),
                                   "with_code": len(pairs),
                                   "correct": sum(x.verified for x in measured), "kept": len(keep)}
        if keep:
            model, sft_figures = run_sft(model, tokenizer, keep, recipe.sft, run.path / "trainer" / f"self_train{r}",
                                         seed=recipe.seed + r, report_to=recipe.report_to,
                                         policy_checkpointing=recipe.policy.gradient_checkpointing)
            figures.update({f"sft_{k}": v for k, v in sft_figures.items()})
        run.save_state(self_train_rounds_done=r + 1)
        run.log("self_train", seconds=time.monotonic() - t0, peak_rss_gib=peak_rss_gib(), **figures)
    return model
