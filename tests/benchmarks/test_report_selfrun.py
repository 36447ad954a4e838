"""benchmarks/scripts/report_selfrun.py reads each task's latest self-pair: a pair measured again (kb_selfrun.py
--again-out-of-memory) supersedes the earlier result, which stays in the store."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cudal1.harness import EvalConfig, EvalResult, ResultStore, load_suite, reference_candidate

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("report_selfrun", ROOT / "benchmarks/scripts/report_selfrun.py")
rs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rs)  # type: ignore[union-attr]
TASKS = {t.name: t for t in load_suite(f"dir:{ROOT / 'tests/harness/fixtures/tasks'}")}


def test_a_task_measured_again_counts_once_with_its_latest_result(tmp_path):
    store = ResultStore(tmp_path / "self.sqlite")
    cfg = EvalConfig(device="cpu")
    a, b = TASKS["tiny_linear_relu"], TASKS["tiny_matmul_cpu"]
    oom = "ModelNew.forward raised in timed call 3: OutOfMemoryError: CUDA out of memory."
    store.add(EvalResult(task=a.name, status="runtime_error", reason=oom), a, reference_candidate(a), cfg, run="after")
    store.add(EvalResult(task=b.name, status="ok", speedup=1.0), b, reference_candidate(b), cfg, run="after")
    store.add(EvalResult(task=a.name, status="ok", speedup=0.99), a, reference_candidate(a), cfg, run="after:again")
    store.close()
    recs = rs.load(str(tmp_path / "self.sqlite"))
    assert [(r["task"], r["status"]) for r in recs] == [(b.name, "ok"), (a.name, "ok")]
    assert len(ResultStore(tmp_path / "self.sqlite").results()) == 3  # nothing measured is lost
