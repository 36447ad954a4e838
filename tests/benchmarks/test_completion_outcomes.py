"""benchmarks/scripts/completion_outcomes.py: what became of each completion of a learning run (issue 42 item 6),
with a verified answer that merely rewrites a seed answer told apart from new work."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("completion_outcomes", ROOT / "benchmarks/scripts/completion_outcomes.py")
co = importlib.util.module_from_spec(spec)
spec.loader.exec_module(co)

SEED = '''import torch.nn as nn
from cudal1.kernelzoo import layer_norm


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return layer_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)
'''
REWRITE = SEED.replace(", self.norm.eps)", ")")  # the default eps: the same zoo call, written differently
NEW = SEED.replace("return layer_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)",
                   "return softmax(layer_norm(x, self.norm.weight, self.norm.bias))").replace(
    "import layer_norm", "import layer_norm, softmax")
BAD_IMPORT = SEED.replace("import layer_norm", "import fit_")


def _fence(code: str) -> str:
    return "## Performance Analysis\nx\n\n```python\n" + code + "```\n"


def test_each_completion_lands_in_one_column_and_failures_are_sorted_by_kind(tmp_path):
    run = tmp_path / "grpo"
    run.mkdir()
    rows = [("no code here", False, None, [], False), (_fence(BAD_IMPORT), True, "compile_error", [], False),
            (_fence(SEED), True, "ok", ["uses_custom_kernel"], True), (_fence(REWRITE), True, "ok", [], True),
            (_fence(NEW), True, "ok", [], False), (_fence(SEED), True, "ok", ["same_as_reference"], False)]
    with (run / "completions.jsonl").open("w") as f:
        for text, has_code, status, flags, improves in rows:
            f.write(json.dumps({"stage": "grpo:0", "task": "layer_norm", "text": text, "has_code": has_code,
                                "status": status, "flags": flags, "improves": improves}) + "\n")
    con = sqlite3.connect(run / "results.sqlite")
    con.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, task TEXT, candidate_source TEXT, record TEXT)")
    con.execute("INSERT INTO results (task, candidate_source, record) VALUES (?, ?, ?)",
                ("layer_norm", BAD_IMPORT, json.dumps({"reason": "importing the candidate failed: ImportError: cannot "
                                                       "import name 'fit_' from 'cudal1.kernelzoo' (...)"})))
    con.commit()
    con.close()
    seeds = co.Seeds({co.identity(SEED)}, {"layer_norm": {co.zoo_calls(SEED)}})
    table, errors, _ = co.outcomes(run, seeds)
    row = table["grpo:0"]
    assert row["completions"] == 6 and row["no code block"] == 1 and row["compile error"] == 1
    assert row["seed answer, verified"] == 1 and row["seed answer's zoo calls, verified"] == 1
    assert row["other, verified"] == 1 and row["reference handed back"] == 1
    assert row["of them improvements"] == 2
    assert errors["grpo:0"] == {"compile_error: import of a name the zoo does not have": 1}
    assert co.zoo_calls(NEW) == {"layer_norm", "softmax"} and co.zoo_calls("not python (") == frozenset()


def test_a_verified_answer_that_repeats_an_earlier_stages_verified_code_is_counted(tmp_path):
    """GRPO prompts show earlier verified answers (the exemplars): an answer of a later stage with the same code on
    the same task is counted as a repeat; the first of its kind, the same code on another task, and a repeat within
    one stage are not."""
    run = tmp_path / "grpo"
    run.mkdir()
    rows = [("grpo:0", "layer_norm", NEW), ("grpo:0", "layer_norm", NEW), ("grpo:1", "layer_norm", NEW),
            ("grpo:1", "softmax", NEW), ("grpo:1", "layer_norm", REWRITE), ("grpo:2", "layer_norm", REWRITE)]
    with (run / "completions.jsonl").open("w") as f:
        for stage, task, code in rows:
            f.write(json.dumps({"stage": stage, "task": task, "text": _fence(code), "has_code": True,
                                "status": "ok", "flags": [], "improves": True}) + "\n")
    table, _, _ = co.outcomes(run, co.Seeds(set(), {}))
    key = "of them an earlier stage's verified code"
    assert [table[s][key] for s in ("grpo:0", "grpo:1", "grpo:2")] == [0, 1, 1]
    assert table["grpo:1"]["other, verified"] == 3
