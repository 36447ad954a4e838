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
    (["grpo.rounds=two"], "must be a int"),
    (["policy.lora=maybe"], "true or false"),
    (["rounds"], "section.key=value"),
])
def test_bad_overrides_name_the_key(overrides, match):
    with pytest.raises(RecipeError, match=match):
        Recipe.from_dict({}, overrides)


def test_unknown_recipe_lists_known_ones():
    with pytest.raises(RecipeError, match="known recipes: .*default"):
        load_recipe("no_such_recipe", configs_dir=CONFIGS)


def test_every_shipped_recipe_is_valid():
    for f in CONFIGS.glob("*.yaml"):
        load_recipe(str(f))


def test_grpo_vllm_settings_reach_trl_by_name_and_bad_ones_are_refused():
    from cudal1.policy.grpo import vllm_settings

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
