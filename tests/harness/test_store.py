"""The SQLite results store: WAL, immediate writes, resume keys, refusing foreign files."""

from __future__ import annotations

import json
import sqlite3

import pytest

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore, StoreError, Task

TASK = Task(name="t", source="class Model: ...\ndef get_inputs(): ...\ndef get_init_inputs(): ...\n")
CAND = Candidate(source="class ModelNew: ...\n", task="t")
CFG = EvalConfig()


def result(**kw):
    base = dict(task="t", status="ok", speedup=1.23, speedup_ci=(1.1, 1.3), ref_ms=2.0, cand_ms=1.6,
                flags=("timing_unstable",), timing={"rounds": 10}, environment={"gpu_name": "X"})
    base.update(kw)
    return EvalResult(**base)


def test_results_round_trip_and_are_visible_to_another_connection_at_once(tmp_path):
    path = tmp_path / "r.sqlite"
    store = ResultStore(path)
    store.add(result(), TASK, CAND, CFG, run="run1")
    other = sqlite3.connect(path)  # a second reader sees the committed row before close
    assert other.execute("SELECT count(*) FROM results").fetchone()[0] == 1
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    got = store.lookup(TASK, CAND, CFG)
    assert got == result()
    assert store.lookup(TASK, CAND, CFG.replace(baseline="compile")) is None  # config is part of the key
    assert store.lookup(TASK, Candidate(source="other"), CFG) is None
    store.close()
    again = ResultStore(path)  # reopen: everything still there
    assert again.results(run="run1") == [result()]


def test_json_export(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    store.add(result(), TASK, CAND, CFG, run="a")
    store.add(result(status="incorrect", speedup=None, speedup_ci=None, reason="trial 1: wrong"), TASK,
              Candidate(source="x"), CFG, run="a")
    n = store.export_json(tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text())
    assert n == 2 and [d["status"] for d in data] == ["ok", "incorrect"]
    assert all({"task", "status", "speedup", "flags", "reason", "run", "created_at"} <= set(d) for d in data)


def test_eval_result_rejects_invalid_states():
    with pytest.raises(ValueError):
        EvalResult(task="t", status="great")
    with pytest.raises(ValueError):
        EvalResult(task="t", status="incorrect", speedup=2.0)
    r = result()
    assert EvalResult.from_json(r.to_json()) == r


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_bytes(b"my precious notes\n" * 10)
    with pytest.raises(StoreError, match="not an SQLite file"):
        ResultStore(p)
    assert p.read_bytes() == b"my precious notes\n" * 10


def test_another_programs_database_is_refused_and_left_untouched(tmp_path):
    p = tmp_path / "other.db"
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('ada')")
    db.commit()
    db.close()
    before = p.read_bytes()
    with pytest.raises(StoreError, match="another program"):
        ResultStore(p)
    assert p.read_bytes() == before


def test_a_folder_or_missing_parent_is_refused(tmp_path):
    with pytest.raises(StoreError, match="folder"):
        ResultStore(tmp_path)
    with pytest.raises(StoreError, match="does not exist"):
        ResultStore(tmp_path / "no" / "such" / "r.sqlite")


def test_read_only_store_reads_and_never_writes(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.add(result(), TASK, CAND, CFG, run="run1")
    with sqlite3.connect(path) as c:  # one file, as a store is committed with measured results
        c.execute("PRAGMA journal_mode=DELETE")
    before = path.read_bytes()
    with ResultStore(path, read_only=True) as ro:
        assert ro.lookup(TASK, CAND, CFG) == result() and ro.results(run="run1") == [result()]
        with pytest.raises(StoreError, match="read-only"):
            ro.add(result(), TASK, Candidate(source="y"), CFG)
    assert path.read_bytes() == before  # not even the journal mode changed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]
    with pytest.raises(StoreError, match="no results store"):
        ResultStore(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with pytest.raises(StoreError, match="no results store"):
        ResultStore(tmp_path / "empty.sqlite", read_only=True)
