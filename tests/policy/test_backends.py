"""Generation backends: the OpenAI-compatible HTTP client against a real local server speaking the protocol,
the local transformers backend on a tiny random Llama with the embedded tokenizer, the factory's specs."""

from __future__ import annotations

import copy
import socket

import pytest
import torch

from cudal1.policy.backends import BackendError, GenerationBackend, SamplingParams, backend_name, make_backend
from cudal1.policy.backends.openai_http import OpenAIChatBackend
from cudal1.policy.backends.transformers_local import TransformersBackend
from cudal1.policy.backends.vllm_backend import VLLMBackend, vllm_available
from cudal1.policy.embedded import load_embedded_tokenizer, save_tokenizer, tiny_policy

# ---------------------------------------------------------------- a server speaking OpenAI chat completions


@pytest.fixture
def server(openai_server):
    """The shared fake OpenAI server (tests/conftest.py)."""
    return openai_server


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def test_http_request_fields_and_choices(server):
    backend = OpenAIChatBackend(server.base_url, "coder-7b", api_key="sk-test", extra_body={"top_k": 20})
    out = backend.generate([chat("a"), chat("b")], SamplingParams(max_new_tokens=64, temperature=0.5, top_p=0.9,
                                                                  n=2, seed=7))
    assert out == [["a|seed=7|0", "a|seed=7|1"], ["b|seed=7|0", "b|seed=7|1"]]
    assert isinstance(backend, GenerationBackend) and backend.name == "openai:coder-7b"
    assert len(server.requests) == 2
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"
    assert req["body"] == {"model": "coder-7b", "messages": chat("a"), "max_tokens": 64, "temperature": 0.5,
                           "top_p": 0.9, "n": 2, "seed": 7, "top_k": 20}


def test_http_api_key_from_env_and_none(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    OpenAIChatBackend(server.base_url + "/", "m").generate([chat("x")], SamplingParams(n=1))
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIChatBackend(server.base_url, "m").generate([chat("x")], SamplingParams(n=1))
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-env"
    assert "Authorization" not in server.requests[1]["headers"]
    assert "seed" not in server.requests[1]["body"]  # no seed given: none sent


def test_http_retries_500_once(server):
    server.failures.append((500, {"error": {"message": "engine overloaded"}}, {}))
    out = OpenAIChatBackend(server.base_url, "m", backoff_s=0.01).generate([chat("q")], SamplingParams(n=1, seed=3))
    assert out == [["q|seed=3|0"]]
    assert len(server.requests) == 2 and server.requests[0]["body"] == server.requests[1]["body"]


def test_http_retries_429_with_retry_after(server):
    server.failures.append((429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}))
    out = OpenAIChatBackend(server.base_url, "m", backoff_s=5.0).generate([chat("q")], SamplingParams())
    assert out == [["q|seed=None|0"]] and len(server.requests) == 2


def test_http_400_raises_server_message_without_retry(server):
    server.failures.append((400, {"error": {"message": "max_tokens is too large: 99999", "type": "invalid"}}, {}))
    backend = OpenAIChatBackend(server.base_url, "m", backoff_s=0.01)
    with pytest.raises(BackendError, match=r"HTTP 400.*max_tokens is too large: 99999"):
        backend.generate([chat("q")], SamplingParams())
    assert len(server.requests) == 1


def test_http_wrong_path_is_a_4xx(server):
    backend = OpenAIChatBackend(server.base_url.removesuffix("/v1"), "m")
    with pytest.raises(BackendError, match="HTTP 404.*no route /chat/completions"):
        backend.generate([chat("q")], SamplingParams())


def test_http_gives_up_after_max_retries(server):
    server.failures.extend([(503, {"error": {"message": "warming up"}}, {})] * 10)
    backend = OpenAIChatBackend(server.base_url, "m", max_retries=2, backoff_s=0.01)
    with pytest.raises(BackendError, match="failed 3 times.*HTTP 503: warming up"):
        backend.generate([chat("q")], SamplingParams())
    assert len(server.requests) == 3


def test_http_tops_up_when_server_returns_fewer_choices(server):
    server.max_choices = 1
    out = OpenAIChatBackend(server.base_url, "m").generate([chat("t")], SamplingParams(n=3, seed=10))
    assert out == [["t|seed=10|0", "t|seed=11|0", "t|seed=12|0"]]
    assert [r["body"]["n"] for r in server.requests] == [3, 2, 1]


def test_http_concurrency_keeps_prompt_order(server):
    prompts = [chat(str(i)) for i in range(6)]
    out = OpenAIChatBackend(server.base_url, "m", concurrency=3).generate(prompts, SamplingParams(n=1, seed=0))
    assert out == [[f"{i}|seed=0|0"] for i in range(6)]


def test_http_connection_refused_is_retried_then_raised():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens there
    backend = OpenAIChatBackend(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff_s=0.01, timeout_s=2)
    with pytest.raises(BackendError, match="failed 2 times.*(refused|Connection)"):
        backend.generate([chat("q")], SamplingParams())


def test_http_rejects_bad_arguments():
    with pytest.raises(ValueError, match="http"):
        OpenAIChatBackend("localhost:8000/v1", "m")
    backend = OpenAIChatBackend("http://127.0.0.1:1/v1", "m")
    with pytest.raises(ValueError, match="wrap a single prompt"):
        backend.generate(chat("q"), SamplingParams())  # a single prompt, not wrapped in a list


# ---------------------------------------------------------------- sampling parameters


@pytest.mark.parametrize("kw, what", [({"max_new_tokens": 0}, "max_new_tokens"), ({"n": 0}, "n must"),
                                      ({"temperature": -0.1}, "temperature"), ({"top_p": 0.0}, "top_p"),
                                      ({"top_p": 1.5}, "top_p"), ({"seed": -1}, "seed"), ({"n": 2.0}, "n must"),
                                      ({"temperature": float("nan")}, "temperature")])
def test_sampling_params_validation(kw, what):
    with pytest.raises(ValueError, match=what):
        SamplingParams(**kw)


# ---------------------------------------------------------------- local transformers backend


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return load_embedded_tokenizer(cache_dir=tmp_path_factory.mktemp("no-cache"))  # read from the GGUF file


@pytest.fixture(scope="module")
def tiny(tokenizer):
    return tiny_policy(tokenizer, hidden_size=64, layers=2, heads=4, seed=0)


PROMPTS = [chat("Write a CUDA kernel for relu."), [{"role": "user", "content": "hi"}]]


def test_local_n_completions_and_seeded(tiny, tokenizer):
    backend = TransformersBackend(tiny, tokenizer, batch_size=4)
    params = SamplingParams(max_new_tokens=6, temperature=1.0, top_p=0.95, n=3, seed=123)
    rng = torch.random.get_rng_state()
    out = backend.generate(PROMPTS, params)
    assert torch.equal(rng, torch.random.get_rng_state())  # the caller's RNG is left alone
    assert [len(o) for o in out] == [3, 3] and all(isinstance(t, str) and t for o in out for t in o)
    assert len(set(out[0])) > 1  # sampled, not greedy
    assert backend.generate(PROMPTS, params) == out
    assert backend.generate(PROMPTS, SamplingParams(max_new_tokens=6, temperature=1.0, n=3, seed=124)) != out


def test_local_sampling_is_temperature_and_top_p_only(tiny, tokenizer, monkeypatch):
    """transformers adds top-k 50 unless told otherwise; SamplingParams has no top-k, so none may apply."""
    seen = []
    original = tiny._get_logits_processor

    def spy(*a, **k):
        processors = original(*a, **k)
        seen.append([type(p).__name__ for p in processors])
        return processors

    monkeypatch.setattr(tiny, "_get_logits_processor", spy)
    TransformersBackend(tiny, tokenizer).generate(PROMPTS[:1], SamplingParams(max_new_tokens=2, temperature=0.7,
                                                                              top_p=0.9, n=2, seed=0))
    assert seen == [["TemperatureLogitsWarper", "TopPLogitsWarper"]]


def test_local_greedy_is_new_text_only(tiny, tokenizer):
    backend = TransformersBackend(tiny, tokenizer, batch_size=1)
    out = backend.generate(PROMPTS, SamplingParams(max_new_tokens=8, temperature=0.0, n=2, seed=5))
    assert all(o[0] == o[1] for o in out)
    assert backend.generate(PROMPTS, SamplingParams(max_new_tokens=8, temperature=0.0, n=2, seed=99)) == out
    for messages, texts in zip(PROMPTS, out, strict=True):  # by hand: the prompt alone, unpadded
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            seq = tiny.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, do_sample=False,
                                pad_token_id=tokenizer.pad_token_id)
        assert texts[0] == tokenizer.decode(seq[0, ids.shape[1]:], skip_special_tokens=True)
        assert messages[-1]["content"] not in texts[0] and "<|im_start|>" not in texts[0]
    # left padding: a batch of prompts of different lengths gives the same answers as one at a time
    assert TransformersBackend(tiny, tokenizer, batch_size=8).generate(
        PROMPTS, SamplingParams(max_new_tokens=8, temperature=0.0, n=2)) == out


def test_local_restores_train_mode_and_checks_template(tokenizer):
    model = tiny_policy(tokenizer, seed=1).train()
    TransformersBackend(model, tokenizer).generate(PROMPTS[:1], SamplingParams(max_new_tokens=2, temperature=0))
    assert model.training
    no_template = copy.deepcopy(tokenizer)
    no_template.chat_template = None
    with pytest.raises(BackendError, match="no chat template"):
        TransformersBackend(model, no_template)


def test_hf_spec_loads_a_saved_model(tiny, tokenizer, tmp_path):
    tiny.save_pretrained(tmp_path)
    save_tokenizer(tokenizer, tmp_path)
    backend = make_backend(f"hf:{tmp_path}", device="cpu", local_files_only=True)
    assert backend.name == f"hf:{tmp_path}" and next(backend.model.parameters()).dtype == torch.float32
    reference = TransformersBackend(tiny, tokenizer)
    params = SamplingParams(max_new_tokens=5, temperature=0)
    assert backend.generate(PROMPTS, params) == reference.generate(PROMPTS, params)


# ---------------------------------------------------------------- factory and vLLM


def test_factory_openai_spec():
    b = make_backend("openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-7B-Instruct", api_key="k", max_retries=1)
    assert isinstance(b, OpenAIChatBackend)
    assert b.url == "http://localhost:8000/v1/chat/completions" and b.model == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert b.name == "openai:Qwen/Qwen2.5-Coder-7B-Instruct" and b.max_retries == 1 and b.api_key == "k"


@pytest.mark.parametrize("spec", ["", "gpt4", "foo:bar", "hf:", "openai:http://localhost:8000/v1",
                                  "openai:#model", "openai:http://x/v1#", "vllm:  ", "embedded:x"])
def test_factory_rejects_bad_specs(spec):
    with pytest.raises(ValueError, match=r"embedded, hf:NAME_OR_PATH, openai:BASE_URL#MODEL, vllm:MODEL"):
        make_backend(spec)
    with pytest.raises(ValueError, match=r"embedded, hf:NAME_OR_PATH, openai:BASE_URL#MODEL, vllm:MODEL"):
        backend_name(spec)


def test_backend_name_without_building():
    spec = "openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-7B-Instruct"
    assert backend_name(spec) == make_backend(spec).name == "openai:Qwen/Qwen2.5-Coder-7B-Instruct"
    assert backend_name(" embedded ") == "embedded"
    assert backend_name("hf:/models/x") == "hf:/models/x" and backend_name("vllm:Qwen/Q") == "vllm:Qwen/Q"


@pytest.mark.skipif(vllm_available(), reason="vLLM is installed here")
def test_vllm_unavailable():
    assert not vllm_available()
    with pytest.raises(BackendError, match="pip install vllm"):
        VLLMBackend("Qwen/Qwen2.5-0.5B-Instruct")
    with pytest.raises(BackendError, match="pip install vllm"):
        make_backend("vllm:Qwen/Qwen2.5-0.5B-Instruct")
