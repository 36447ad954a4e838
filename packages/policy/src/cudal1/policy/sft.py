"""Stage 1 (and the fine-tuning step of stage 2): supervised fine-tuning with trl's SFTTrainer on
prompt-completion chat examples (cudal1.policy.seed_data format); loss on the completion only."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .recipe import SFTSection

__all__ = ["run_sft"]


def run_sft(model: Any, tokenizer: Any, examples: Sequence[dict[str, Any]], cfg: SFTSection, out_dir: str | Path, *,
            seed: int = 0, report_to: str = "none", peft_config: Any = None) -> tuple[Any, dict[str, Any]]:
    """Fine-tune ``model`` on ``examples``; returns (trained model, figures: steps, train_loss, seconds).

    Raises ValueError when there are no examples (nothing to learn from is a configuration error).
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    rows = [{"prompt": e["prompt"], "completion": e["completion"]} for e in examples]
    if cfg.max_examples is not None:
        rows = rows[: cfg.max_examples]
    if not rows:
        raise ValueError("SFT has no examples: enable sft.seed_data or give sft.data JSONL files")
    args = SFTConfig(
        output_dir=str(out_dir), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.learning_rate, max_length=cfg.max_length, logging_steps=1, save_strategy="no",
        report_to=report_to, seed=seed, use_cpu=not torch.cuda.is_available(), completion_only_loss=True,
        bf16=torch.cuda.is_available() and next(model.parameters()).dtype == torch.bfloat16,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                         peft_config=peft_config)
    t0 = time.monotonic()
    out = trainer.train()
    return trainer.model, {"examples": len(rows), "steps": int(out.global_step),
                           "train_loss": float(out.training_loss), "seconds": time.monotonic() - t0}
