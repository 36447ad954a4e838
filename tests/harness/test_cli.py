"""cudal1-eval: listing, bad arguments (exit 2, one line), solutions folders, JSON, store resume."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cudal1.harness import load_suite
from cudal1.harness.cli import main
from cudal1.harness.solutions import load_solutions, uncovered_note

FIX = Path(__file__).parent / "fixtures"
FAST = ["--device", "cpu", "--trials", "5", "--timeout", "60", "--quiet"]


def run_cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_prints_one_task_per_line(capsys):
    code, out, _ = run_cli(["--suite", "builtin", "--list"], capsys)
    assert code == 0
    assert out.split() == [t.name for t in load_suite("builtin")]


def test_list_reports_broken_task_files_by_name(capsys):
    code, out, err = run_cli(["--suite", f"dir:{FIX / 'broken_tasks'}", "--list"], capsys)
    assert code == 0
    assert set(out.split()) == {"good_one", "import_fails", "exits_at_import"}
    assert "task bad_syntax skipped: syntax error" in err and "task no_model skipped" in err


@pytest.mark.parametrize("args, words", [
    (["--suite", "dir:/no/such/dir"], "does not exist"),
    (["--suite", "bogus"], "unknown suite spec"),
    (["--suite", "builtin", "--solutions", "/no/such/dir"], "does not exist"),
    (["--suite", "builtin", "--baseline", "fastest"], "invalid choice"),
    (["--suite", "builtin", "--device", "tpu"], "invalid choice"),
    (["--suite", "builtin", "--device", "cpu", "--baseline", "cudagraph"], "needs a CUDA device"),
    (["--suite", "builtin", "--timeout", "-1", "--device", "cpu"], "positive"),
    (["--suite", "builtin", "--tasks", "relu", "--device", "cpu", "--lanes-per-gpu", "0"], "at least 1"),
    (["--list"], "required"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, words):
    code, out, err = run_cli(args, capsys)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("cudal1-eval: error:")


def test_foreign_store_file_exits_2_and_is_untouched(tmp_path, capsys):
    p = tmp_path / "mine.db"
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    before = p.read_bytes()
    code, _, err = run_cli(["--suite", f"dir:{FIX / 'tasks'}", "--store", str(p), *FAST], capsys)
    assert code == 2 and "another program" in err
    assert p.read_bytes() == before


@pytest.mark.slow
def test_solutions_json_and_resume(tmp_path, capsys):
    sol = tmp_path / "solutions"
    sol.mkdir()
    # good, syntax error, missing ModelNew, wrong constructor, and a file that matches no task
    shutil.copy(FIX / "candidates" / "correct_rewrite.py", sol / "tiny_linear_relu.py")
    shutil.copy(FIX / "candidates" / "syntax_error.py", sol / "tiny_layernorm.py")
    shutil.copy(FIX / "candidates" / "missing_modelnew.py", sol / "tiny_matmul_cpu.py")
    shutil.copy(FIX / "candidates" / "correct_rewrite.py", sol / "not_a_task.py")
    out_json, store = tmp_path / "out.json", tmp_path / "run.sqlite"
    args = ["--suite", f"dir:{FIX / 'tasks'}", "--solutions", str(sol), "--json", str(out_json),
            "--store", str(store), *FAST]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "not_a_task.py matches no task" in err
    records = json.loads(out_json.read_text())
    by_task = {r["task"]: r for r in records}
    assert set(by_task) == {"tiny_linear_relu", "tiny_layernorm", "tiny_matmul_cpu"}
    for r in records:
        assert {"task", "status", "speedup", "flags", "reason"} <= set(r)
        assert isinstance(r["flags"], list) and isinstance(r["reason"], str)
    assert by_task["tiny_linear_relu"]["status"] == "ok" and by_task["tiny_linear_relu"]["speedup"] > 0
    assert by_task["tiny_layernorm"]["status"] == "compile_error"
    assert by_task["tiny_matmul_cpu"]["status"] == "compile_error"
    assert "success rate" in out and "fast_1" in out and "geometric mean" in out
    rows = sqlite3.connect(store).execute("SELECT count(*) FROM results").fetchone()[0]
    assert rows == 3
    # resume: nothing is redone, the same records come back
    code, _, err = run_cli(args, capsys)
    assert code == 0
    assert sqlite3.connect(store).execute("SELECT count(*) FROM results").fetchone()[0] == 3
    assert json.loads(out_json.read_text()) == records


@pytest.mark.slow
def test_a_task_that_fails_to_load_is_a_task_error_and_the_rest_runs(tmp_path, capsys):
    out_json = tmp_path / "o.json"
    code, out, err = run_cli(["--suite", f"dir:{FIX / 'broken_tasks'}", "--json", str(out_json), *FAST], capsys)
    assert code == 3  # the run completed, but tasks could not be used: not a clean exit
    recs = {r["task"]: r for r in json.loads(out_json.read_text())}
    assert recs["good_one"]["status"] == "ok"
    for name, words in (("import_fails", "cudal1_this_module_does_not_exist"), ("exits_at_import", "exited with code 3")):
        assert recs[name]["status"] == "task_error" and "task_error" in recs[name]["flags"], recs[name]
        assert words in recs[name]["reason"], recs[name]["reason"]
    assert "left out" in out  # not counted against the candidates
    assert "task bad_syntax skipped" in err and "task import_fails could not be used" in err


def test_unwritable_store_and_json_paths_exit_2_before_any_pair(tmp_path, capsys):
    store = tmp_path / "run.sqlite"
    (tmp_path / "run.sqlite-wal").mkdir()  # SQLite cannot make its journal: the store cannot be written (root too)
    code, _, err = run_cli(["--suite", f"dir:{FIX / 'tasks'}", "--store", str(store), *FAST], capsys)
    assert code == 2 and str(store) in err and ("cannot write to the store" in err or "not a usable" in err), err
    (tmp_path / "out.json").mkdir()
    code, _, err = run_cli(["--suite", f"dir:{FIX / 'tasks'}", "--json", str(tmp_path / "out.json"), *FAST], capsys)
    assert code == 2 and "is not a writable file" in err
    code, _, err = run_cli(["--suite", f"dir:{FIX / 'tasks'}", "--json", str(tmp_path / "nope" / "o.json"), *FAST],
                           capsys)
    assert code == 2 and "does not exist" in err


def test_require_sandbox_refuses_where_none_can_be_made(monkeypatch, capsys):
    from cudal1.harness import sandbox

    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.SandboxInfo(False, None, "no namespaces (test)"))
    code, _, err = run_cli(["--suite", f"dir:{FIX / 'tasks'}", "--require-sandbox", *FAST], capsys)
    assert code == 2 and "no namespaces (test)" in err and "--require-sandbox" in err


def test_sigterm_kills_every_worker_and_removes_their_folders(tmp_path):
    import os
    import signal
    import time

    sol = tmp_path / "sol"
    sol.mkdir()
    shutil.copy(FIX / "candidates" / "infinite_loop.py", sol / "tiny_linear_relu.py")
    scratch = tmp_path / "scratch"
    exe = Path(sys.executable).parent / "cudal1-eval"
    proc = subprocess.Popen([str(exe), "--suite", f"dir:{FIX / 'tasks'}", "--solutions", str(sol), "--store",
                             str(tmp_path / "s.sqlite"), *FAST], env={**os.environ, "CUDAL1_SCRATCH": str(scratch)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (any(scratch.glob("cudal1-ref-*")) and any(scratch.glob("cudal1-can-*"))):
        time.sleep(0.2)
    time.sleep(5)  # the candidate loads, then loops forever in forward
    workers = _workers_under(proc.pid)
    assert workers, "no worker seen"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err[-2000:]
    assert "interrupted" in err
    time.sleep(0.5)
    assert [p for p in workers if Path(f"/proc/{p}").exists() and _state(p) != "Z"] == []
    assert list(scratch.iterdir()) == []  # every worker folder (and log) removed
    assert sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT count(*) FROM results").fetchone()[0] == 0


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _workers_under(root: int) -> list[int]:
    """Every descendant of ``root`` (worker launchers, bwrap, the sandboxed workers)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "cudal1-eval"
    res = subprocess.run([str(exe), "--suite", "builtin:level3", "--list"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and len(res.stdout.split()) >= 10
    bad = subprocess.run([str(exe), "--suite", "dir:/nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_tasks_option_selects_and_names_unknown_tasks(capsys):
    code, out, _ = run_cli(["--suite", "builtin", "--tasks", "relu,gelu", "--list"], capsys)
    assert code == 0 and out.split() == ["gelu", "relu"]
    code, _, err = run_cli(["--suite", "builtin", "--tasks", "relu,nope", "--list"], capsys)
    assert code == 2 and "no task nope" in err


def test_tasks_without_a_solution_file_are_counted_and_explained(tmp_path):
    """A solutions folder that covers part of the suite: the note counts the rest and, where the folder has an
    ``unsolved.json``, how many of them it explains; a full folder gets no note; a broken file is named."""
    tasks = load_suite(f"dir:{FIX / 'tasks'}")
    sol = tmp_path / "solutions"
    sol.mkdir()
    shutil.copy(FIX / "candidates" / "correct_rewrite.py", sol / "tiny_linear_relu.py")
    pairs, _ = load_solutions(str(sol), tasks)
    n = len(tasks)
    assert uncovered_note(str(sol), tasks, pairs) == (
        f"{n - 1} of the suite's {n} tasks have no file in {sol} and are not evaluated")
    (sol / "unsolved.json").write_text(json.dumps({"tasks": {"tiny_layernorm": {"reason": "launch_bound", "why": "x"},
                                                             "not_in_suite": {"reason": "x", "why": "y"}}}))
    assert uncovered_note(str(sol), tasks, pairs).endswith(f"; {sol / 'unsolved.json'} says why for 1 of them")
    (sol / "unsolved.json").write_text("{not json")
    assert "is not readable JSON" in uncovered_note(str(sol), tasks, pairs)
    for t in tasks:
        shutil.copy(FIX / "candidates" / "correct_rewrite.py", sol / f"{t.name}.py")
    assert uncovered_note(str(sol), tasks, load_solutions(str(sol), tasks)[0]) is None
