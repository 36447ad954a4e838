"""apps/evaluate.py end to end on the CPU: two solution sets side by side through the real harness, the
report files, resuming from the store, --report-only, and argument errors (exit 2, one line)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "apps" / "evaluate.py"

TASK_SCALE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x * self.scale)


def get_inputs():
    return [torch.randn(256, 128)]


def get_init_inputs():
    return [2.0]
'''

TASK_LINEAR = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.fc(x))


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return [32]
'''

GOOD = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.clamp_min(x * self.scale, 0.0)
'''

WRONG = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + 0.01
'''


def _app():
    spec = importlib.util.spec_from_file_location("evaluate_app", APP)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["evaluate_app"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def layout(tmp_path):
    tasks, sol = tmp_path / "tasks", tmp_path / "mine"
    tasks.mkdir()
    sol.mkdir()
    (tasks / "scale_relu.py").write_text(TASK_SCALE)
    (tasks / "linear_tanh.py").write_text(TASK_LINEAR)
    (sol / "scale_relu.py").write_text(GOOD)
    (sol / "linear_tanh.py").write_text(WRONG)
    return tmp_path


def _count(db: Path) -> int:
    with closing(sqlite3.connect(db)) as c:
        return c.execute("SELECT COUNT(*) FROM results").fetchone()[0]


def _args(layout: Path, *extra: str) -> list[str]:
    return ["--set", f"mine={layout / 'mine'}", "--set", "ref=reference", "--suite", f"dir:{layout / 'tasks'}",
            "--baselines", "eager", "--device", "cpu", "--trials", "1", "--time-budget", "0.2",
            "--out", str(layout / "out"), "--quiet", *extra]


@pytest.mark.slow
def test_two_sets_side_by_side_then_resume_and_report_only(layout, capsys):
    app = _app()
    assert app.main(_args(layout)) == 0
    out = layout / "out"
    for name in ("report.md", "report.html", "report.json", "results.sqlite", "device.json", "work.json"):
        assert (out / name).is_file(), name
    rep = json.loads((out / "report.json").read_text())
    assert rep["sets"] == ["mine", "ref"] and rep["baselines"] == ["eager"]
    mine = rep["summary"]["mine"]["eager"]["all"]
    assert mine["tasks"] == 2 and mine["ok"] == 1 and mine["statuses"]["incorrect"] == 1
    assert rep["summary"]["ref"]["eager"]["all"]["ok"] == 2
    rows = {r["task"]: r for r in rep["tasks"]}
    assert rows["linear_tanh"]["results"]["mine|eager"]["status"] == "incorrect"
    assert rows["linear_tanh"]["flops"] == 2 * 64 * 32 * 32  # counted on the meta device
    assert {t["tag"] for t in rep["techniques"]["mine"]} == {"algebraic_rewrite"}
    md = (out / "report.md").read_text()
    assert "| mine / eager | ref / eager |" in md
    page = (out / "report.html").read_text()
    assert page.count('<img class="plot"') == 3  # distribution, roofline, per task (eager)
    printed = capsys.readouterr().out
    assert "== mine against eager ==" in printed and "report.html" in printed

    db = out / "results.sqlite"
    rows_before = _count(db)
    assert rows_before == 4
    assert app.main(_args(layout)) == 0  # resumed: every pair read back from the store
    assert _count(db) == rows_before
    again = json.loads((out / "report.json").read_text())
    assert again["summary"]["mine"] == rep["summary"]["mine"]

    with closing(sqlite3.connect(db)) as c:  # as a committed store is kept: one file, no WAL
        c.execute("PRAGMA journal_mode=DELETE")
    stored = db.read_bytes()
    assert app.main(_args(layout, "--report-only")) == 0
    assert db.read_bytes() == stored and not (out / "results.sqlite-wal").exists()  # read, never written
    (layout / "tasks" / "scale_relu_twice.py").write_text(TASK_SCALE.replace("return [2.0]", "return [3.0]"))
    assert app.main(_args(layout, "--report-only")) == 0  # a task nobody evaluated: said, not hidden
    md = (out / "report.md").read_text()
    # only the reference set has a candidate for the new task (mine has no file for it)
    assert "not evaluated yet (left out of every figure): ref / eager: 1 of 3 tasks" in md
    assert "not in the store yet" in capsys.readouterr().err
    (layout / "tasks" / "scale_relu_twice.py").unlink()
    # the set's files changed after the run (a docstring): the store holds none of their sources, so --report-only
    # reports nothing of them until --baseline-set points eager's lookup at the files that were measured
    edited = layout / "mine_edited"
    edited.mkdir()
    for f in (layout / "mine").iterdir():
        (edited / f.name).write_text('"""Edited after measuring."""\n' + f.read_text())
    moved = [a if a != f"mine={layout / 'mine'}" else f"mine={edited}" for a in _args(layout, "--report-only")]
    assert app.main(moved) == 0
    assert "mine / eager: 2 of 2 tasks" in (out / "report.md").read_text()
    assert app.main(moved + ["--baseline-set", f"eager:mine={layout / 'mine'}"]) == 0
    looked_up = json.loads((out / "report.json").read_text())
    assert looked_up["summary"]["mine"] == rep["summary"]["mine"]
    capsys.readouterr()
    assert app.main([a if a != "1" else "3" for a in _args(layout, "--report-only")]) == 2  # other --trials
    assert "other settings" in capsys.readouterr().err
    db.unlink()
    assert app.main(_args(layout, "--report-only")) == 2  # no store: said, none created
    assert "no results store" in capsys.readouterr().err and not db.exists()


@pytest.mark.parametrize("extra, message", [
    (["--set", "nameonly"], "NAME=SOLUTIONS"),
    (["--set", "mine=reference"], "given twice"),
    (["--set", "x y=reference"], "letters, digits"),
    (["--baselines", "cudagraph"], "needs a GPU"),
    (["--baselines", "fastest"], "unknown baseline"),
    (["--tasks", "nope"], "has no task nope"),
    (["--set", "z=/no/such/folder"], "does not exist"),
    (["--baseline-set", "eager:mine=/tmp"], "only changes what --report-only looks up"),
    (["--report-only", "--baseline-set", "compile:mine=/tmp"], "not one of the reported baselines"),
    (["--report-only", "--baseline-set", "eager:nosuch=/tmp"], "no --set is named 'nosuch'"),
    (["--report-only", "--baseline-set", "eager=mine"], "BASELINE:NAME=SOLUTIONS"),
])
def test_bad_arguments_exit_2_with_one_line(layout, capsys, extra, message):
    app = _app()
    args = _args(layout)
    if extra[0] == "--baselines":
        i = args.index("--baselines")
        args[i + 1] = extra[1]
        extra = []
    assert app.main(args + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (layout / "out" / "results.sqlite").exists()
