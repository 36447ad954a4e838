"""Shared fixtures for harness tests: tiny CPU tasks and a fast evaluation config."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalConfig, Task, load_suite

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def fixture_tasks() -> dict[str, Task]:
    return {t.name: t for t in load_suite(f"dir:{FIXTURES / 'tasks'}")}


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cudal1-cache")


@pytest.fixture(scope="session")
def fast_config(cache_dir: Path) -> EvalConfig:
    """CPU, one thread, short timing budget, short limits: seconds per evaluation."""
    return EvalConfig(device="cpu", time_budget_s=0.25, min_rounds=10, max_rounds=60, attempts=2,
                      compile_timeout_s=120, run_timeout_s=60, cache_dir=str(cache_dir), cpu_threads=1)


def _candidate(name: str, task: str = "") -> Candidate:
    return Candidate(source=(FIXTURES / "candidates" / f"{name}.py").read_text(), task=task, origin="test")


@pytest.fixture(scope="session")
def candidate():
    """``candidate(name, task)``: a Candidate from fixtures/candidates/<name>.py."""
    return _candidate
