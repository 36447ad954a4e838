"""Stage 3: contrastive GRPO with trl's GRPOTrainer, round by round.

Each round rebuilds its prompts from the results store (cudal1.policy.contrastive: exemplars drawn by score
bucket from everything measured so far, this run's earlier rounds included) for every train task
(``prompts_per_task`` each, in a shuffled order), trains one optimizer step per prompt and pass
(``num_generations`` completions, rewarded by cudal1.policy.rewarding.HarnessReward; ``grpo.trl.num_iterations``
passes over each generated batch, default 1; ``prompts_per_generation`` prompts' completions drawn
in one generate call), then saves the policy to the run's checkpoint and records the round
in state.json, so an interrupted run resumes at the next round.

Every step is logged to metrics.jsonl with its time split: generation (the trainer's ``_generate``), reward
evaluation (the reward function's wall time) and optimisation (the rest of the step), in seconds.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import torch

from .action_space import menu_text
from .contrastive import build_prompt_rows, row_filter
from .loading import is_peft, release_cached_gpu_memory
from .merging import adapters_merged
from .recipe import Recipe
from .rewarding import HarnessReward
from .run_log import RunDir, peak_rss_gib
from .trl_fields import trl_settings, vllm_settings

__all__ = ["run_grpo"]


def _trainer_class() -> type:
    from trl import GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        """GRPOTrainer that adds up the seconds spent generating completions (with the LoRA adapters merged while it
        generates when ``merge_for_generation``)."""

        generation_s = 0.0
        merge_for_generation = False

        def _generate(self, prompts: list) -> Any:
            t0 = time.monotonic()
            try:
                merge = self.merge_for_generation and not (self.is_deepspeed_enabled or self.use_vllm)
                with adapters_merged(self.model, merge):
                    return super()._generate(prompts)
            finally:
                self.generation_s += time.monotonic() - t0

    return TimedGRPOTrainer


def _step_logger(run: RunDir, reward: HarnessReward, round_index: int) -> Any:
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        def __init__(self) -> None:
            self.trainer: Any = None
            self.t0 = 0.0
            self.gen0 = 0.0
            self.hist0 = 0
            self.pending: dict[str, Any] | None = None

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.monotonic()
            self.gen0 = self.trainer.generation_s if self.trainer else 0.0
            self.hist0 = len(reward.history)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
            # the trainer logs a step's loss after on_step_end: the step's record waits for it here
            if self.pending is not None and logs and "loss" in logs:
                self.flush(loss=logs.get("loss"))

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.flush(loss=None)

        def flush(self, loss: Any) -> None:
            if self.pending is not None:
                run.log("grpo_step", **{**self.pending, "loss": loss})
                self.pending = None

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            step_s = time.monotonic() - self.t0
            gen_s = (self.trainer.generation_s if self.trainer else 0.0) - self.gen0
            calls = reward.history[self.hist0:]
            reward_s = sum(c["reward_eval_s"] for c in calls)
            figures: dict[str, Any] = {}
            for key in ("format_rate", "code_rate", "compile_rate", "correct_rate", "novel_correct_rate", "improved_rate",
                        "reward_mean"):
                vals = [c[key] for c in calls if isinstance(c.get(key), float) and math.isfinite(c[key])]
                figures[key] = sum(vals) / len(vals) if vals else None
            sp = [c["mean_speedup"] for c in calls if math.isfinite(c.get("mean_speedup", float("nan")))]
            figures["mean_speedup"] = sum(sp) / len(sp) if sp else None
            best = [c["best_speedup"] for c in calls if math.isfinite(c.get("best_speedup", float("nan")))]
            figures["best_speedup"] = max(best) if best else None
            flags: dict[str, int] = {}
            statuses: dict[str, int] = {}
            for c in calls:
                for k, v in c.items():
                    if k.startswith("flags/"):
                        flags[k[6:]] = flags.get(k[6:], 0) + int(v)
                for k, v in c.get("statuses", {}).items():
                    statuses[k] = statuses.get(k, 0) + int(v)
            self.flush(loss=None)  # a previous step whose loss was never logged
            self.pending = dict(round=round_index, step=int(state.global_step), step_s=step_s, generation_s=gen_s,
                                reward_s=reward_s, optimisation_s=max(0.0, step_s - gen_s - reward_s),
                                completions=sum(c["completions"] for c in calls), statuses=statuses, flags=flags,
                                peak_rss_gib=peak_rss_gib(), **figures)

    return StepLog()


def run_grpo(model: Any, tokenizer: Any, recipe: Recipe, tasks: list, store: Any, reward: HarnessReward, run: RunDir,
             *, peft_config: Any = None, start_round: int = 0, stop_round: int | None = None) -> Any:
    """Train rounds ``start_round`` .. ``stop_round`` - 1 (default: to ``recipe.grpo.rounds``); returns the trained
    model (saved to the run's checkpoint after every round)."""
    from datasets import Dataset
    from trl import GRPOConfig

    g = recipe.grpo
    rng = random.Random(recipe.seed + 7919 * start_round)
    cuda = torch.cuda.is_available()

    def count_tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    micro = g.micro_batch_size or g.num_generations
    if micro < 1 or g.num_generations % micro:
        raise ValueError(f"grpo.micro_batch_size ({micro}) must divide grpo.num_generations ({g.num_generations})")
    vllm = vllm_settings(g.use_vllm, g.vllm)
    passthrough = trl_settings(g.trl)
    # trl reuses each generated batch for num_iterations optimisation passes (GRPO's mu); its _step counts them, so a
    # round's optimizer steps are its prompts times that (with max_steps = prompts, passes 2.. never ran)
    iterations = int(passthrough.get("num_iterations", 1))
    if iterations < 1:
        raise ValueError(f"grpo.trl.num_iterations must be at least 1, got {iterations}")
    trainer_cls = _trainer_class()
    menu = menu_text(recipe.action_space)
    reward.group_size = g.num_generations
    for r in range(start_round, g.rounds if stop_round is None else min(stop_round, g.rounds)):
        reward.stage = f"grpo:{r}"
        rows = build_prompt_rows(store, tasks, n=g.exemplars, tau=g.tau, bucket_width=g.bucket_width, rng=rng,
                                 count_tokens=count_tokens, max_tokens=g.prompt_budget_tokens,
                                 per_task=max(1, g.prompts_per_task), menu=menu, keep=row_filter(g.exemplars_from))
        rng.shuffle(rows)  # every train task, every round
        run.log("grpo_round_prompts", round=r, prompts=len(rows), tasks=[x["task"] for x in rows],
                exemplars=[x["exemplars"] for x in rows], shown=[x["shown"] for x in rows],
                shown_behaviour=[x["shown_behaviour"] for x in rows], shown_speedup=[x["shown_speedup"] for x in rows])
        per_generation = min(g.prompts_per_generation or len(rows), len(rows))  # 0: the whole round at once
        args = GRPOConfig(
            output_dir=str(run.path / "trainer" / f"grpo-round{r}"), per_device_train_batch_size=micro,
            gradient_accumulation_steps=g.num_generations // micro,
            steps_per_generation=g.num_generations // micro * per_generation, num_generations=g.num_generations,
            max_completion_length=g.max_completion_length,
            temperature=g.temperature, top_p=g.top_p, learning_rate=g.learning_rate, beta=g.beta,
            max_steps=len(rows) * iterations, logging_steps=1, save_strategy="no", report_to=recipe.report_to,
            seed=recipe.seed + r, use_cpu=not cuda, shuffle_dataset=False, use_vllm=g.use_vllm,
            vllm_mode=g.vllm_mode, **vllm, **passthrough,
            gradient_checkpointing=recipe.policy.gradient_checkpointing,
            bf16=cuda and next(model.parameters()).dtype == torch.bfloat16,
        )
        callback = _step_logger(run, reward, r)
        trainer = trainer_cls(model=model, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows),
                              processing_class=tokenizer, callbacks=[callback],
                              peft_config=None if is_peft(model) else peft_config)
        callback.trainer = trainer
        trainer.merge_for_generation = recipe.policy.merge_for_generation
        t0 = time.monotonic()
        trainer.train()
        model = trainer.model
        trainer.save_model(str(run.checkpoint))  # main process only; gathers ZeRO-3 shards where needed
        run.save_state(grpo_rounds_done=r + 1)
        run.log("grpo_round", round=r, seconds=time.monotonic() - t0, steps=len(rows) * iterations,
                best=dict(reward.best), peak_rss_gib=peak_rss_gib())
        del trainer, callback
        release_cached_gpu_memory()
    return model
