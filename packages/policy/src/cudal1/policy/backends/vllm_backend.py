"""vLLM in-process (``vllm.LLM.chat``), when vLLM is installed. vLLM is not a dependency of cudal1-policy:
install it on GPU machines with ``pip install vllm``. For a vLLM *server*, use ``OpenAIChatBackend``."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from .base import BackendError, Messages, SamplingParams, check_prompts

__all__ = ["VLLMBackend", "vllm_available"]


def vllm_available() -> bool:
    """Whether ``import vllm`` would find a package (without importing it)."""
    return importlib.util.find_spec("vllm") is not None


class VLLMBackend:
    """``model``: hub name or local folder; ``llm_kwargs`` go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``,
    ``gpu_memory_utilization``, ``max_model_len``, ``dtype``)."""

    def __init__(self, model: str, **llm_kwargs: Any) -> None:
        if not vllm_available():
            raise BackendError(f"vllm:{model} needs vLLM, which is not installed: `pip install vllm` on a GPU "
                               "machine, or serve the model elsewhere and use openai:BASE_URL#MODEL")
        import vllm

        self._vllm = vllm
        self.llm = vllm.LLM(model=model, **llm_kwargs)
        self.name = f"vllm:{model}"

    def generate(self, prompts: Sequence[Messages], params: SamplingParams) -> list[list[str]]:
        """For each prompt, ``params.n`` completions (text of each vLLM output)."""
        chats = check_prompts(prompts)
        if not chats:
            return []
        sp = self._vllm.SamplingParams(n=params.n, temperature=params.temperature, top_p=params.top_p,
                                       max_tokens=params.max_new_tokens, seed=params.seed)
        outputs = self.llm.chat(chats, sp, use_tqdm=False)
        return [[o.text for o in out.outputs] for out in outputs]
