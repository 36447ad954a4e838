"""A recipe's GRPO settings as keyword arguments of trl's ``GRPOConfig``: the ``grpo.vllm`` and ``grpo.trl``
mappings, checked against the trl that is installed (a misspelt name would otherwise be dropped by nobody and
ignored by trl). Imports trl only when a mapping is set; used by the recipe's validation (before any model loads)
and by the GRPO stage."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["SET_BY_CUDAL1", "trl_settings", "vllm_settings"]


def vllm_settings(use_vllm: bool, settings: dict[str, Any]) -> dict[str, Any]:
    """GRPOConfig keyword arguments of a recipe's ``grpo.vllm`` mapping (names without the ``vllm_`` prefix).
    Raises ValueError for a name trl does not know, or settings given while ``grpo.use_vllm`` is false."""
    if not settings:
        return {}
    from trl import GRPOConfig

    if not use_vllm:
        raise ValueError(f"grpo.vllm is set ({sorted(settings)}) but grpo.use_vllm is false: set grpo.use_vllm=true "
                         "or drop grpo.vllm")
    known = {f.name.removeprefix("vllm_") for f in dataclasses.fields(GRPOConfig) if f.name.startswith("vllm_")}
    known -= {"mode"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"grpo.vllm: trl's GRPOConfig has no vllm_ setting {unknown}; known: {sorted(known)} "
                         "(grpo.vllm_mode is its own key)")
    return {f"vllm_{k}": v for k, v in settings.items()}


#: GRPOConfig fields cudal1 sets itself (from the recipe's typed keys, the run folder and the prompt rows): a
#: ``grpo.trl`` mapping may not set them
SET_BY_CUDAL1 = frozenset({
    "output_dir", "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations",
    "max_completion_length", "temperature", "top_p", "learning_rate", "beta", "max_steps", "logging_steps",
    "save_strategy", "report_to", "seed", "use_cpu", "shuffle_dataset", "use_vllm", "vllm_mode",
    "gradient_checkpointing", "bf16", "steps_per_generation", "generation_batch_size"})


def trl_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """GRPOConfig keyword arguments of a recipe's ``grpo.trl`` mapping: any field of trl's ``GRPOConfig`` by its own
    name (``loss_type``, ``epsilon``, ``num_iterations``, ``scale_rewards``, ``mask_truncated_completions``, ...),
    passed through unchanged. Raises ValueError for a name trl does not know, a ``vllm_`` field (``grpo.vllm``
    holds those) or a field cudal1 sets itself (:data:`SET_BY_CUDAL1`; the message names the recipe key)."""
    if not settings:
        return {}
    from trl import GRPOConfig

    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"grpo.trl: trl's GRPOConfig has no field {unknown} (trl {_trl_version()})")
    vllm = sorted(k for k in settings if k.startswith("vllm_"))
    if vllm:
        raise ValueError(f"grpo.trl: {vllm} are vLLM settings: put them in grpo.vllm without the vllm_ prefix")
    ours = sorted(set(settings) & SET_BY_CUDAL1)
    if ours:
        raise ValueError(f"grpo.trl: cudal1 sets {ours} itself: use the recipe's own key (grpo.num_generations, "
                         "grpo.temperature, policy.gradient_checkpointing, grpo.prompts_per_generation, ...), "
                         "not grpo.trl")
    return dict(settings)


def _trl_version() -> str:
    import trl

    return str(getattr(trl, "__version__", "?"))
