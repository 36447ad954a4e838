"""Suite specs and task loading, including KernelBench's layout (fixture files of our own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudal1.harness import SuiteError, load_suite, load_suite_report, reference_candidate
from cudal1.harness.types import Task

FIX = Path(__file__).parent / "fixtures"


def test_builtin_levels_are_disjoint_and_cover_the_whole_suite():
    whole = {t.name for t in load_suite("builtin")}
    parts = [{t.name for t in load_suite(f"builtin:level{n}")} for n in (1, 2, 3)]
    assert len(parts[0]) >= 30 and len(parts[1]) >= 20 and len(parts[2]) >= 10
    assert set().union(*parts) == whole
    assert sum(len(p) for p in parts) == len(whole) >= 60
    assert all(t.level == 1 for t in load_suite("builtin:level1"))


def test_kernelbench_layout_loads_levels_as_found_and_reports_problems():
    for root in (FIX / "kernelbench", FIX / "kernelbench" / "KernelBench"):
        rep = load_suite_report(f"kernelbench:{root}")
        names = {(t.name, t.level) for t in rep.tasks}
        assert names == {("1_Tiny_scale", 1), ("2_Tiny_tanh", 1), ("1_Tiny_linear_gelu", 2)}
        assert [(p.name, "get_init_inputs" in p.reason) for p in rep.problems] == [("1_Tiny_missing_init_inputs", True)]


def test_dir_suite_reports_each_bad_file_by_name_and_keeps_the_rest():
    rep = load_suite_report(f"dir:{FIX / 'broken_tasks'}")
    assert {t.name for t in rep.tasks} == {"good_one", "import_fails", "exits_at_import"}
    reasons = {p.name: p.reason for p in rep.problems}
    assert "syntax error" in reasons["bad_syntax"]
    assert "Model" in reasons["no_model"]


@pytest.mark.parametrize("spec, words", [
    ("nonsense", "unknown suite spec"),
    ("builtin:level9", "unknown built-in level"),
    ("dir:/no/such/folder", "does not exist"),
    ("dir:", "needs a path"),
    (f"kernelbench:{FIX / 'tasks'}", "no level1..level4"),
])
def test_bad_specs_raise_clear_errors(spec, words):
    with pytest.raises(SuiteError, match=words):
        load_suite(spec)


def test_duplicate_task_names_are_refused(tmp_path):
    for lvl in ("level1", "level2"):
        (tmp_path / lvl).mkdir()
        (tmp_path / lvl / "same.py").write_text((FIX / "tasks" / "tiny_layernorm.py").read_text())
    with pytest.raises(SuiteError, match="appears twice"):
        load_suite(f"kernelbench:{tmp_path}")


def test_task_and_reference_candidate_round_trip():
    t = load_suite(f"dir:{FIX / 'tasks'}")[0]
    assert Task.from_json(t.to_json()) == t
    c = reference_candidate(t)
    assert "class ModelNew(" in c.source and "Model(" not in c.source.replace("ModelNew(", "")
    assert c.task == t.name and c.hash != t.hash
