"""Any OpenAI-compatible chat-completions endpoint (vLLM's OpenAI server, hosted APIs), standard library only.

Each prompt is one ``POST {base_url}/chat/completions`` with ``{model, messages, max_tokens, temperature,
top_p, n[, seed]}`` (plus ``extra_body``). Servers that return fewer than ``n`` choices (many hosted APIs
ignore ``n``) are asked again for the rest; the seed of a top-up request is ``seed + k`` so that it does not
repeat the first answers. 429, 5xx, timeouts and connection errors are retried with exponential backoff
(``backoff_s * 2**attempt``, capped at 30 s, or the server's ``Retry-After``); other 4xx raise
``BackendError`` with the server's own message at once.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .base import BackendError, Messages, SamplingParams, check_prompts

__all__ = ["OpenAIChatBackend"]

MAX_BACKOFF_S = 30.0


def _server_message(body: bytes) -> str:
    """The error text of an OpenAI-style error body (``{"error": {"message": ...}}``), else the raw text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:2000] or "(empty body)"
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if data.get("message"):
            return str(data["message"])
    return text[:2000]


class OpenAIChatBackend:
    """``base_url``: the API root, e.g. ``http://host:8000/v1``. ``model``: the served model's name.
    ``api_key``: sent as ``Authorization: Bearer``; default ``$OPENAI_API_KEY`` (none sent when unset, as a
    local vLLM server needs none). ``timeout_s``: per request. ``max_retries``: retries of one request after
    its first try. ``extra_body``: merged into every request (e.g. ``{"top_k": 20}`` for vLLM, or
    ``{"max_completion_tokens": 4096}`` for APIs that want it). ``concurrency``: prompts in flight at once."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 120,
                 max_retries: int = 3, extra_body: dict[str, Any] | None = None, backoff_s: float = 1.0,
                 concurrency: int = 1) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r} "
                             "(e.g. http://localhost:8000/v1)")
        if not model:
            raise ValueError("model must name the served model (e.g. Qwen/Qwen2.5-Coder-7B-Instruct)")
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0 or concurrency < 1:
            raise ValueError("need max_retries >= 0, timeout_s > 0, backoff_s >= 0, concurrency >= 1")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.timeout_s, self.max_retries, self.backoff_s = model, timeout_s, max_retries, backoff_s
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.extra_body = dict(extra_body or {})
        self.concurrency = concurrency
        self.name = f"openai:{model}"

    def generate(self, prompts: Sequence[Messages], params: SamplingParams) -> list[list[str]]:
        """For each prompt, ``params.n`` completions (the ``message.content`` of each choice)."""
        chats = check_prompts(prompts)
        if self.concurrency == 1 or len(chats) <= 1:
            return [self._complete(c, params) for c in chats]
        with ThreadPoolExecutor(min(self.concurrency, len(chats))) as pool:
            return list(pool.map(lambda c: self._complete(c, params), chats))

    def _complete(self, messages: list[dict[str, str]], params: SamplingParams) -> list[str]:
        texts: list[str] = []
        request = 0
        while len(texts) < params.n:
            body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": params.max_new_tokens,
                                    "temperature": params.temperature, "top_p": params.top_p,
                                    "n": params.n - len(texts)}
            if params.seed is not None:
                body["seed"] = params.seed + request
            body.update(self.extra_body)
            data = self._post(body)
            choices = data.get("choices") if isinstance(data, dict) else None
            if not choices:
                raise BackendError(f"{self.url} returned no choices for model {self.model!r}: {str(data)[:500]}")
            for choice in sorted(choices, key=lambda c: c.get("index", 0)):
                content = (choice.get("message") or {}).get("content")
                texts.append(content if isinstance(content, str) else "")
            request += 1
        return texts[:params.n]

    def _post(self, body: dict[str, Any]) -> Any:
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = min(MAX_BACKOFF_S, self.backoff_s * 2 ** attempt)
            req = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    raw = resp.read()
                try:
                    return json.loads(raw)
                except ValueError:
                    last = f"response is not JSON: {raw[:200]!r}"
            except urllib.error.HTTPError as e:
                msg = _server_message(e.read() if e.fp is not None else b"")
                if e.code != 429 and e.code < 500 and e.code != 408:
                    raise BackendError(f"{self.url} refused the request (HTTP {e.code}) for model {self.model!r}: "
                                       f"{msg}") from None
                last = f"HTTP {e.code}: {msg}"
                retry_after = e.headers.get("Retry-After") if e.headers else None
                if retry_after is not None:
                    try:
                        wait = min(MAX_BACKOFF_S, max(0.0, float(retry_after)))
                    except ValueError:
                        pass
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:  # incl. timeouts, resets
                last = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
            if attempt < self.max_retries:
                time.sleep(wait)
        raise BackendError(f"{self.url} failed {self.max_retries + 1} times for model {self.model!r}; last error: "
                           f"{last}. Check that the server is up and serves this model, or raise max_retries/timeout_s")
