"""The contract every generation backend keeps: chat prompts in, ``n`` text completions per prompt out.

A prompt is a list of chat messages (``{"role": "system" | "user" | "assistant", "content": str}``). A
backend returns, for each prompt in order, ``params.n`` completions: the assistant's reply text only,
never the prompt, special tokens removed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["BackendError", "GenerationBackend", "Messages", "SamplingParams", "check_prompts"]

Messages = Sequence[Mapping[str, str]]
"""One chat prompt: messages with ``role`` and ``content``."""


class BackendError(RuntimeError):
    """A backend could not generate: the server refused or kept failing, or a dependency is missing.
    The message says what went wrong and what to do."""


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. ``max_new_tokens``: tokens generated per completion, at most (>= 1).
    ``temperature``: 0 is greedy (deterministic; ``n`` identical completions locally), > 0 samples.
    ``top_p``: nucleus mass in (0, 1]. ``n``: completions per prompt (>= 1). ``seed``: makes sampling
    repeatable where the backend allows (local backends: exactly; servers: best effort)."""

    max_new_tokens: int = 512
    temperature: float = 0.8
    top_p: float = 0.95
    n: int = 1
    seed: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise ValueError(f"SamplingParams.max_new_tokens must be an int >= 1, got {self.max_new_tokens!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"SamplingParams.n must be an int >= 1 (completions per prompt), got {self.n!r}")
        if not isinstance(self.temperature, (int, float)) or not math.isfinite(self.temperature) or self.temperature < 0:
            raise ValueError(f"SamplingParams.temperature must be a finite number >= 0 (0 = greedy), "
                             f"got {self.temperature!r}")
        if not isinstance(self.top_p, (int, float)) or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"SamplingParams.seed must be None or an int >= 0, got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@runtime_checkable
class GenerationBackend(Protocol):
    """Anything that turns chat prompts into completions. ``name`` identifies it in results
    (e.g. ``embedded``, ``openai:MODEL``), since candidates record their origin as ``teacher:{name}``."""

    name: str

    def generate(self, prompts: Sequence[Messages], params: SamplingParams) -> list[list[str]]:
        """For each prompt, ``params.n`` completions (assistant text only), in prompt order."""


def check_prompts(prompts: Sequence[Messages]) -> list[list[dict[str, str]]]:
    """``prompts`` as plain lists of ``{"role", "content"}`` dicts; ValueError naming the first bad one.
    (A bare string or a single message list passed by mistake is caught here, not deep in a tokenizer.)"""
    if isinstance(prompts, (str, Mapping)):
        raise ValueError("prompts must be a sequence of chat prompts (each a list of {'role', 'content'} messages), "
                         f"got {type(prompts).__name__}; wrap a single prompt as [messages]")
    out = []
    for i, messages in enumerate(prompts):
        if isinstance(messages, Mapping) and "role" in messages:
            raise ValueError("prompts must be a list of prompts, each a list of messages; got a list of messages: "
                             "wrap a single prompt as [messages]")
        if isinstance(messages, str) or not messages:
            raise ValueError(f"prompt {i} must be a non-empty list of {{'role', 'content'}} messages, got {messages!r:.80}")
        converted = []
        for m in messages:
            if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                raise ValueError(f"prompt {i}: each message needs string 'role' and 'content', got {m!r:.80}")
            converted.append({"role": m["role"], "content": m["content"]})
        out.append(converted)
    return out
