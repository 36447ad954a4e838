"""The stage apps as a user runs them: arguments, recipe errors, and a tiny real run of each."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = ["policy.model=tiny", "tasks.names=[relu]", "tasks.sizes={relu: {BATCH: 8, DIM: 64}}",
        "eval.device=cpu", "eval.harness.trials=2", "eval.harness.time_budget_s=0.05", "eval.harness.min_rounds=5",
        "eval.harness.max_rounds=10", "eval.harness.attempts=1", "eval.harness.cpu_threads=1", "sft.max_steps=1",
        "sft.max_length=1024", "self_train.enabled=false", "evaluation.enabled=false",
        "grpo.rounds=1", "grpo.prompts_per_task=1", "grpo.num_generations=2", "grpo.max_completion_length=8",
        "self_train.samples_per_task=1", "self_train.max_new_tokens=8"]


def app(name: str):
    spec = importlib.util.spec_from_file_location(f"app_{name}", ROOT / "apps" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"app_{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["train_grpo", "train_sft", "self_train"])
def test_unknown_recipe_or_key_is_a_clear_error(name, capsys, tmp_path):
    assert app(name).main(["--recipe", "no_such_recipe", "--output-dir", str(tmp_path)]) == 2
    assert "known recipes" in capsys.readouterr().err
    assert app(name).main(["--output-dir", str(tmp_path), "grpo.bogus=1"]) == 2
    assert "unknown key" in capsys.readouterr().err


def test_collect_sft_refuses_a_bad_teacher_spec(capsys, tmp_path):
    assert app("collect_sft").main(["--teacher", "nonsense", "--out", str(tmp_path / "t.jsonl")]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_train_grpo_tiny_run_prints_summary_and_resumes(capsys, tmp_path):
    assert app("train_grpo").main(["--output-dir", str(tmp_path), "--run-name", "r", *TINY]) == 0
    out = capsys.readouterr().out
    assert "# cudal1 run r" in out and "generation s" in out
    run = tmp_path / "r"
    assert json.loads((run / "state.json").read_text()) == {"sft_done": True, "grpo_rounds_done": 1}
    assert app("train_grpo").main(["--resume", str(run), "grpo.rounds=2"]) == 0
    assert json.loads((run / "state.json").read_text())["grpo_rounds_done"] == 2
    assert app("train_grpo").main(["--resume", str(tmp_path / "missing")]) == 2


def test_train_sft_and_self_train_tiny_runs(tmp_path):
    assert app("train_sft").main(["--output-dir", str(tmp_path / "sft"), *TINY]) == 0
    (sft_run,) = (tmp_path / "sft").iterdir()
    assert (sft_run / "checkpoint" / "adapter_config.json").is_file()  # the default recipe trains LoRA adapters
    assert app("self_train").main(["--output-dir", str(tmp_path / "st"), *TINY]) == 0
    (st_run,) = (tmp_path / "st").iterdir()
    events = [json.loads(x) for x in (st_run / "metrics.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["self_train"] and events[0]["samples"] == 1
