"""Stage 1 (and the fine-tuning step of stage 2): supervised fine-tuning with trl's SFTTrainer on
prompt-completion chat examples (cudal1.policy.seed_data format); loss on the completion only."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .loading import release_cached_gpu_memory
from .recipe import SFTSection

__all__ = ["run_sft", "too_long"]

log = logging.getLogger(__name__)


def too_long(tokenizer: Any, rows: Sequence[dict[str, Any]], max_length: int) -> list[int]:
    """Indices of the prompt-completion rows whose chat-formatted text is longer than ``max_length`` tokens.

    trl cuts such an example at ``max_length``, from the end: the completion loses its last tokens (the close of the
    code block, often the whole ``class ModelNew``), and the policy learns answers that stop mid-code. In the default
    recipe some of the contrastive seed examples were longer than its ``max_length`` and were cut so
    (benchmarks/results/2026-12-05-library-docstring-figures.md)."""
    out = []
    for i, r in enumerate(rows):
        text = tokenizer.apply_chat_template(list(r["prompt"]) + list(r["completion"]), tokenize=False)
        if len(tokenizer(text, add_special_tokens=False)["input_ids"]) > max_length:
            out.append(i)
    return out


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU computes bfloat16 products natively (the ``avx512_bf16`` or ``amx_bf16`` flag of
    /proc/cpuinfo; False where there is none to read). ``cpuinfo``: that file's text (for tests)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[-1].split()}
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def bf16_training(cpu_autocast: str, dtype: torch.dtype, *, cuda: bool | None = None,
                  native: bool | None = None) -> bool:
    """Whether SFT trains under bfloat16 mixed precision: on CUDA, when the model's weights are bfloat16; without
    CUDA, per ``cpu_autocast`` (``auto``: where the CPU has native bfloat16 products, :func:`cpu_has_native_bf16`;
    ``bf16``; ``off``)."""
    cuda = torch.cuda.is_available() if cuda is None else cuda
    if cuda:
        return dtype == torch.bfloat16
    if cpu_autocast == "auto":
        return cpu_has_native_bf16() if native is None else native
    return cpu_autocast == "bf16"


def run_sft(model: Any, tokenizer: Any, examples: Sequence[dict[str, Any]], cfg: SFTSection, out_dir: str | Path, *,
            seed: int = 0, report_to: str = "none", peft_config: Any = None,
            policy_checkpointing: bool = False) -> tuple[Any, dict[str, Any]]:
    """Fine-tune ``model`` on ``examples``; returns (trained model, figures: examples, too_long_left_out, steps,
    train_loss, seconds, bf16, gradient_checkpointing). Examples longer than ``cfg.max_length`` tokens are left out
    (:func:`too_long`). Gradient checkpointing follows ``cfg.gradient_checkpointing``, or when that is unset the
    policy's setting ``policy_checkpointing`` (``policy.gradient_checkpointing``).

    Raises ValueError when there are no examples (nothing to learn from is a configuration error), or none short
    enough.
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    rows = [{"prompt": e["prompt"], "completion": e["completion"]} for e in examples]
    if cfg.max_examples is not None:
        rows = rows[: cfg.max_examples]
    if not rows:
        raise ValueError("SFT has no examples: enable sft.seed_data or give sft.data JSONL files")
    cut = set(too_long(tokenizer, rows, cfg.max_length))
    if cut:  # trained on, they would teach answers that stop mid-code: left out, and counted in the figures
        log.warning("SFT: %d of %d examples are longer than sft.max_length (%d tokens) and are left out; raise "
                    "sft.max_length to train on them", len(cut), len(rows), cfg.max_length)
        rows = [r for i, r in enumerate(rows) if i not in cut]
    if not rows:
        raise ValueError(f"every SFT example is longer than sft.max_length ({cfg.max_length} tokens): raise it")
    args = SFTConfig(
        output_dir=str(out_dir), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.learning_rate, max_length=cfg.max_length, logging_steps=1, save_strategy="no",
        report_to=report_to, seed=seed, use_cpu=not torch.cuda.is_available(), completion_only_loss=True,
        bf16=bf16_training(cfg.cpu_autocast, next(model.parameters()).dtype),
        gradient_checkpointing=(policy_checkpointing if cfg.gradient_checkpointing is None
                                else cfg.gradient_checkpointing),
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                         peft_config=peft_config)
    t0 = time.monotonic()
    out = trainer.train()
    figures = {"examples": len(rows), "too_long_left_out": len(cut), "steps": int(out.global_step),
               "train_loss": float(out.training_loss), "seconds": time.monotonic() - t0, "bf16": bool(args.bf16),
               "gradient_checkpointing": bool(args.gradient_checkpointing)}
    model = trainer.model
    del trainer  # its optimizer state and the allocator's cached blocks are not needed by what comes next
    release_cached_gpu_memory()
    return model, figures
