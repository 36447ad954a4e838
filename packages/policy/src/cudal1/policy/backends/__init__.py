"""Generation backends of the policy: one interface, ``GenerationBackend.generate(prompts, params)``.

- ``TransformersBackend``: a local transformers causal LM (the embedded SmolLM2 default, any ``hf:`` model,
  the policy being trained);
- ``OpenAIChatBackend``: any OpenAI-compatible chat-completions endpoint (a vLLM server, hosted APIs),
  standard library only;
- ``VLLMBackend``: vLLM in-process, when vLLM is installed.

``make_backend(spec)`` builds one from a string: ``embedded``, ``hf:NAME_OR_PATH``,
``openai:BASE_URL#MODEL``, ``vllm:MODEL``. Heavy modules (torch, transformers, vllm) load only when the
backend that needs them is built.
"""

from .base import BackendError, GenerationBackend, Messages, SamplingParams
from .factory import BACKEND_SPECS, backend_name, make_backend

__all__ = ["BACKEND_SPECS", "BackendError", "GenerationBackend", "Messages", "SamplingParams", "backend_name",
           "make_backend"]
