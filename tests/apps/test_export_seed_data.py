"""apps/export_seed_data.py: a measured solution set becomes stage-1 teacher data, only where the harness's one
rule says it improves (verified, CI above 1), tagged with its suite and speedup, never for a held-out task."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "apps" / "export_seed_data.py"


def _app():
    spec = importlib.util.spec_from_file_location("export_seed_data", APP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(task, status, speedup, ci, flags=()):
    return {"task": task, "results": {"kernelzoo|eager": {"status": status, "speedup": speedup, "ci": ci,
                                                          "flags": list(flags)}}}


def test_only_real_improvements_of_training_tasks_are_exported(tmp_path):
    report = {"tasks": [
        _row("softmax", "ok", 1.8, [1.7, 1.9]),                      # kept
        _row("log_softmax", "ok", 1.01, [0.98, 1.04]),               # CI straddles 1: no evidence
        _row("add_layernorm", "rejected", None, None, ["timing_disagrees"]),
        _row("gemm_bias_relu", "ok", 2.0, [1.9, 2.1], ["same_as_reference"]),
        _row("rms_norm", "ok", 3.0, [2.9, 3.1]),                      # a held-out task of the default recipe
    ]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    out = tmp_path / "kb.jsonl"
    rc = _app().main(["--report", str(tmp_path / "report.json"), "--set", "kernelzoo", "--suite", "builtin",
                      "--out", str(out)])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["task"] for r in rows} == {"softmax"} and len(rows) == 2  # one-shot and contrastive
    assert all(r["suite"] == "kernelzoo" and r["speedup"] == 1.8 and r["ci"] == [1.7, 1.9] for r in rows)
    assert all(r["origin"] == "teacher:solutions:kernelzoo" for r in rows)


def test_a_report_without_the_set_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "report.json").write_text(json.dumps({"tasks": [_row("softmax", "ok", 1.8, [1.7, 1.9])]}))
    rc = _app().main(["--report", str(tmp_path / "report.json"), "--set", "kernelbench-v0", "--suite", "builtin",
                      "--out", str(tmp_path / "x.jsonl")])
    assert rc == 2 and "no results for set kernelbench-v0" in capsys.readouterr().err
