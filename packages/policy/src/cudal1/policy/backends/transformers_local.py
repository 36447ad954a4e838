"""Local generation with a transformers causal LM (CPU or one GPU).

Prompts are rendered with the tokenizer's chat template (``add_generation_prompt=True``), left-padded into
batches of token ids (int64, ``[batch, prompt_len]``) and sampled with ``model.generate``; only the new
tokens (``[batch * n, <= max_new_tokens]``) are decoded. ``batch_size`` counts sequences per
``generate`` call (prompts per call = ``max(1, batch_size // n)``), so memory stays bounded as ``n`` grows.
With ``seed`` set, sampling is repeatable: the torch RNG is forked, seeded once per ``generate`` call and
restored afterwards, so the caller's random state (e.g. a trainer's) is left as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..merging import adapters_merged
from .base import BackendError, Messages, SamplingParams, check_prompts

__all__ = ["TransformersBackend"]


class TransformersBackend:
    """``model``: a transformers causal LM (peft-wrapped is fine); ``tokenizer``: its tokenizer, with a chat
    template. ``device``: where to run (default: where the model already is; given, the model is moved
    there). ``name``: how results name this backend (default ``hf:<model name_or_path>``). ``merge_adapters``: a
    peft model's LoRA adapters merged into its weights while it generates (:mod:`cudal1.policy.merging`)."""

    def __init__(self, model: Any, tokenizer: Any, *, device: str | torch.device | None = None, batch_size: int = 8,
                 name: str | None = None, merge_adapters: bool = False) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 (sequences per generate call), got {batch_size}")
        if not getattr(tokenizer, "chat_template", None):
            raise BackendError(f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r} has no chat template: use an "
                               "instruct/chat model, or set tokenizer.chat_template before building the backend")
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise BackendError("tokenizer has neither a pad nor an eos token; set tokenizer.pad_token")
            tokenizer.pad_token = tokenizer.eos_token
        if device is not None:
            model = model.to(device)
        self.model, self.tokenizer, self.batch_size = model, tokenizer, batch_size
        self.merge_adapters = merge_adapters
        self.name = name or f"hf:{getattr(getattr(model, 'config', None), 'name_or_path', '') or type(model).__name__}"

    @classmethod
    def from_pretrained(cls, name_or_path: str, *, dtype: torch.dtype | str | None = None,
                        device: str | torch.device | None = None, batch_size: int = 8,
                        tokenizer_kwargs: dict[str, Any] | None = None, **kw: Any) -> TransformersBackend:
        """Load model and tokenizer by hub name or local folder. ``dtype``: default bfloat16 on CUDA,
        float32 on CPU. ``device``: default ``cuda`` when available, else ``cpu``. ``kw`` go to the model's
        ``from_pretrained`` (and the shared ones, e.g. ``revision``, ``local_files_only``, ``cache_dir``,
        ``trust_remote_code``, ``token``, to the tokenizer's too)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if dtype is None:
            dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
        shared = {k: kw[k] for k in ("revision", "local_files_only", "cache_dir", "trust_remote_code", "token") if k in kw}
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, **{**shared, **(tokenizer_kwargs or {})})
        model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype, **kw)
        return cls(model, tokenizer, device=device, batch_size=batch_size, name=f"hf:{name_or_path}")

    @property
    def device(self) -> torch.device:
        try:
            return next(self.model.parameters()).device
        except StopIteration:
            return torch.device("cpu")

    def render(self, messages: Messages) -> str:
        """The prompt text the model sees for ``messages`` (chat template, generation prompt appended)."""
        return self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)

    def generate(self, prompts: Sequence[Messages], params: SamplingParams) -> list[list[str]]:
        """For each prompt, ``params.n`` completions (new text only). Greedy (temperature 0) decodes each
        prompt once and repeats the result ``n`` times."""
        chats = check_prompts(prompts)
        if not chats:
            return []
        texts = [self.render(c) for c in chats]
        model = self.model
        was_training = model.training
        device = self.device
        fork = [device] if device.type == "cuda" else []
        out: list[list[str]] = []
        per_call = 1 if params.greedy else params.n
        step = max(1, self.batch_size // per_call)
        model.eval()
        try:
            with torch.random.fork_rng(devices=fork), torch.no_grad(), adapters_merged(model, self.merge_adapters):
                if params.seed is not None:
                    torch.manual_seed(params.seed)
                for start in range(0, len(texts), step):
                    out.extend(self._generate_batch(texts[start:start + step], params, per_call, device))
        finally:
            model.train(was_training)
        return out

    def _generate_batch(self, texts: list[str], params: SamplingParams, per_call: int,
                        device: torch.device) -> list[list[str]]:
        tok = self.tokenizer
        enc = tok(texts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
        enc = {k: v.to(device) for k, v in enc.items()}
        gen_kw: dict[str, Any] = {"max_new_tokens": params.max_new_tokens, "pad_token_id": tok.pad_token_id,
                                  "use_cache": True}
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        gen_kw["eos_token_id"] = eos if eos is not None else tok.eos_token_id
        if params.greedy:
            gen_kw["do_sample"] = False
        else:  # top_k=0 switches off transformers' default top-k of 50 (None would mean "use the default")
            gen_kw.update(do_sample=True, temperature=float(params.temperature), top_p=float(params.top_p), top_k=0,
                          num_return_sequences=per_call)
        seqs = self.model.generate(**enc, **gen_kw)
        new = seqs[:, enc["input_ids"].shape[1]:]
        decoded = tok.batch_decode(new, skip_special_tokens=True)
        if params.greedy:
            return [[d] * params.n for d in decoded]
        return [decoded[i * per_call:(i + 1) * per_call] for i in range(len(texts))]
