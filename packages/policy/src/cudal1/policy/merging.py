"""LoRA adapters folded into the base weights while the policy generates (``policy.merge_for_generation``).

A LoRA projection runs three matrix products (base, down, up) and a scaled add per token where a merged one runs
one; for a small policy, generation is latency-bound (one pass per token; per-token times of the 135M policy with
and without its adapters: benchmarks/results/2026-12-05-learning-h200.md), so the adapters' kernels are a real
share of it. :func:`adapters_merged` merges every unmerged LoRA layer for the duration and then restores each base
weight exactly (a copy taken before, not the merge subtracted again), so training continues from the same bits.
Not for a sharded model (DeepSpeed ZeRO-3): its weights are not whole here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .loading import is_peft

__all__ = ["adapters_merged"]


@contextmanager
def adapters_merged(model: Any, enabled: bool = True) -> Iterator[int]:
    """Within the block, ``model``'s LoRA adapters are merged into its base weights; yields how many layers were
    merged (0: nothing to do: disabled, not a peft model, or already merged)."""
    layers = []
    if enabled and is_peft(model):
        from peft.tuners.lora import LoraLayer

        layers = [m for m in model.modules() if isinstance(m, LoraLayer) and not m.merged]
    if not layers:
        yield 0
        return
    with torch.no_grad():
        saved = [(m, m.get_base_layer().weight.detach().clone()) for m in layers]
        for m in layers:
            m.merge()
    try:
        yield len(layers)
    finally:
        with torch.no_grad():
            for m, weight in saved:
                m.unmerge()
                m.get_base_layer().weight.copy_(weight)
