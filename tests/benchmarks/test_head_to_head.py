"""The head-to-head script (benchmarks/scripts/head_to_head.py): a release JSON turned into one file per task, the
per-task verdicts and per-level figures, and both sets run through the real harness on CPU."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[1] / "harness" / "fixtures"


@pytest.fixture()
def h2h(load_script):
    return load_script("benchmarks/scripts/head_to_head.py")


def _kernelbench(root: Path) -> Path:
    """A KernelBench-shaped folder with two level-1 tasks (the harness's tiny fixtures)."""
    (root / "level1").mkdir(parents=True)
    for n, name in ((1, "tiny_linear_relu"), (2, "tiny_layernorm")):
        (root / "level1" / f"{n}_{name}.py").write_text((FIX / "tasks" / f"{name}.py").read_text())
    return root


def test_convert_names_each_file_by_its_task_and_says_what_it_left(h2h, tmp_path):
    kb = _kernelbench(tmp_path / "kb")
    ref = (kb / "level1" / "1_tiny_linear_relu.py").read_text()
    release = {"1": [{"task_id": 1, "ref_code": ref, "custom_code": "class ModelNew: pass\n"},
                     {"task_id": 2, "ref_code": "something else", "custom_code": "class ModelNew: pass\n"},
                     {"task_id": 3, "ref_code": "", "custom_code": "x"},
                     {"task_id": 1, "ref_code": ref, "custom_code": ""}]}
    seen = h2h.convert(release, kb, tmp_path / "out")
    assert seen == {"written": ["1_tiny_linear_relu", "2_tiny_layernorm"], "no_code": ["1_tiny_linear_relu"],
                    "no_task": ["level1/3"], "ref_differs": ["2_tiny_layernorm"]}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["1_tiny_linear_relu.py", "2_tiny_layernorm.py"]


def test_only_verified_speedups_count_and_ties_are_close(h2h):
    S = h2h.Side
    rows = {"a": (1, S("ok", 2.0, True), S("ok", 1.5, True)),       # ahead
            "b": (1, S("ok", 1.2, True), S("ok", 3.0, False)),      # theirs not verified: counts 1.0 -> ahead
            "c": (1, S("incorrect", None, False), S("ok", 1.3, True)),  # behind
            "d": (2, S("ok", 1.00, True), S("ok", 1.01, True)),     # tie
            "e": (2, S("ok", 0.95, True), S("incorrect", None, False)),  # a verified 0.95x beats a wrong file
            "f": (2, S("timeout", None, False), S("incorrect", None, False))}  # neither: tie
    lines, summary = h2h.compare(rows)
    verdicts = {line.split(" | ")[1]: line.split(" | ")[-1].strip(" |") for line in lines[2:]}
    assert verdicts == {"a": "ahead", "b": "ahead", "c": "behind", "d": "tie", "e": "ahead", "f": "tie"}
    one = summary[1]
    assert one["tasks"] == 3 and (one["ahead"], one["behind"], one["tie"]) == (2, 1, 0)
    assert math.isclose(one["ours_geomean"], (2.0 * 1.2 * 1.0) ** (1 / 3))
    assert math.isclose(one["theirs_geomean"], (1.5 * 1.0 * 1.3) ** (1 / 3))
    assert one["theirs_verified"] == 2 and math.isclose(one["theirs_verified_geomean"], (1.5 * 1.3) ** 0.5)
    assert "3.00x (ok, not verified)" in lines[3] and "incorrect" in lines[4]


def test_both_sets_run_through_the_harness_and_resume_from_the_store(h2h, tmp_path, monkeypatch, capsys):
    """Ours: each task's reference as ModelNew; theirs: a correct but slow file on one task and a wrong one on the
    other. A second call reads every pair back from the store."""
    kb = _kernelbench(tmp_path / "kb")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    for f in (kb / "level1").iterdir():
        (ours / f.name).write_text(f.read_text().replace("class Model(", "class ModelNew("))
    (theirs / "1_tiny_linear_relu.py").write_text((FIX / "candidates" / "slow.py").read_text())
    (theirs / "2_tiny_layernorm.py").write_text("import torch\nclass ModelNew(torch.nn.Module):\n"
                                                "    def __init__(self, *a):\n        super().__init__()\n"
                                                "    def forward(self, x):\n        return x * 0\n")
    harness = json.dumps({"time_budget_s": 0.25, "min_rounds": 10, "max_rounds": 30, "attempts": 2,
                          "cpu_threads": 1, "cache_dir": str(tmp_path / "cache")})
    args = ["head_to_head.py", "run", "--kernelbench", str(kb), "--ours", str(ours), "--theirs", str(theirs),
            "--store", str(tmp_path / "h2h.sqlite"), "--device", "cpu", "--harness", harness,
            "--json", str(tmp_path / "h2h.json")]
    monkeypatch.setattr(sys, "argv", args)
    assert h2h.main() == 0
    first = capsys.readouterr().out
    got = json.loads((tmp_path / "h2h.json").read_text())
    assert got["tasks"]["1_tiny_linear_relu"]["theirs"]["status"] == "ok"
    assert got["tasks"]["1_tiny_linear_relu"]["theirs"]["speedup"] < 0.5
    assert got["tasks"]["2_tiny_layernorm"]["theirs"]["status"] == "incorrect"
    assert got["levels"]["1"]["behind"] == 0 and got["levels"]["1"]["tasks"] == 2
    ran = re.findall(r"^\s*[\d.]+s (ours|theirs) ", first, flags=re.M)
    assert sorted(ran) == ["ours", "ours", "theirs", "theirs"], first
    monkeypatch.setattr(sys, "argv", [a if a != "run" else "report" for a in args])
    assert h2h.main() == 0
    again = capsys.readouterr().out
    assert "2 of 2 tasks measured for both sets" in again and json.loads((tmp_path / "h2h.json").read_text()) == got
    assert not re.findall(r"^\s*[\d.]+s (ours|theirs) ", again, flags=re.M)  # read back, nothing run
