"""The drift re-check (``drift_recheck.drift_recheck``): before a pair is rejected ``reference_drift``, the candidate's
process is killed and the reference is timed again beside a twin (a fresh worker running the task's reference).

The drift check itself runs only on a GPU (``tests/harness/test_gpu.py`` has the adversarial candidate, a helper
process that keeps the GPU busy beside the reference, and its legitimate twin); here, on CPU, a pair is run for
real and its reference's paired time is then set as if it had drifted, so that the re-check's machinery (the kill,
the twin's load and rounds, the decision) runs on real workers."""

from __future__ import annotations

import dataclasses
import os
import signal

import pytest

from cudal1.harness import drift_recheck as recheck
from cudal1.harness import pair, reference_candidate
from cudal1.harness.drift_recheck import drift_recheck as _drift_recheck
from cudal1.harness.pair import run_pair
from cudal1.harness.process import WorkerProcess
from cudal1.harness.reference_side import ReferenceSide
from cudal1.harness.rounds import PairRun as _Run
from cudal1.harness.static_checks import analyse
from cudal1.harness.verdict import Failure, Observations


def _worker(role: str) -> WorkerProcess:
    return WorkerProcess(role, {"CUDA_VISIBLE_DEVICES": ""})


@pytest.fixture()
def drifted_pair(fixture_tasks, fast_config, monkeypatch):
    """A real CPU pair of the task's reference against itself, then its reference's paired time multiplied by
    ``factor`` and the pair marked ``reference_drift``: returns ``(make(factor) -> run, workers made)``. The drift
    limit is 100% here (a tiny CPU reference's time moves by tens of percent between two measurements on a
    loaded machine); the factors below are far on either side of it."""
    for module in (pair, recheck):
        monkeypatch.setattr(module, "drift_limit", lambda summary, device="cuda", yardstick_ms=None: 1.0)
    task = fixture_tasks["tiny_linear_relu"]
    made: list[WorkerProcess] = []

    def twin() -> WorkerProcess:
        made.append(_worker("candidate"))
        return made[-1]

    def make(factor: float) -> _Run:
        # the precondition, not what is tested: a self-pair whose timing passed. On a loaded 2-core machine one in a
        # few hundred self-pairs fails its clock check (a full-suite run of 2026-12-06): such a pair is measured again
        for _ in range(3):
            side = ReferenceSide.start(_worker("reference"), task, fast_config, "cpu")
            assert isinstance(side, ReferenceSide), side
            made.append(side.worker)
            cand = _worker("candidate")
            made.append(cand)
            candidate = reference_candidate(task)
            obs = Observations(task=task.name, task_hash=task.hash, candidate_hash="x", baseline="eager",
                               device="cpu")
            run_pair(side, cand, task, candidate, fast_config, obs, static=analyse(candidate.source),
                     extensions_dir=None)
            if obs.summary is not None and obs.timing_failure is None:
                break
        assert obs.summary is not None and obs.timing_failure is None, (obs.timing_failure, sorted(obs.flags))
        obs.summary = dataclasses.replace(obs.summary, ref_ms=obs.summary.ref_ms * factor)
        obs.timing_failure = Failure("rejected", "the reference ran slower beside this candidate", "reference_drift")
        return _Run(side, cand, task, candidate, fast_config, obs)

    yield make, made
    for w in made:
        w.close()


def test_a_reference_as_fast_beside_its_twin_clears_the_drift(drifted_pair):
    make, made = drifted_pair
    run = make(1.0)
    _drift_recheck(run, lambda: made.append(_worker("candidate")) or made[-1])
    info = run.obs.timing["drift_recheck"]
    assert run.obs.timing_failure is None, info
    assert info["cleared"] and info["rounds"] > 0 and info["twin_ref_ms"] > 0
    assert run.cand.proc.returncode is not None, "the candidate's process was not killed before the re-check"
    assert made[-1].proc.returncode is not None, "the twin was left running"


def test_a_reference_slower_beside_the_candidate_than_beside_its_twin_stays_rejected(drifted_pair):
    make, made = drifted_pair
    run = make(20.0)  # as if the candidate had kept the reference 20 times slower while it was loaded
    _drift_recheck(run, lambda: made.append(_worker("candidate")) or made[-1])
    info = run.obs.timing["drift_recheck"]
    assert run.obs.timing_failure is not None and run.obs.timing_failure.flag == "reference_drift"
    assert "re-checked beside a copy of the reference" in run.obs.timing_failure.reason
    assert not info["cleared"] and info["drift"] > info["limit"]


def test_a_twin_that_cannot_run_leaves_the_rejection(drifted_pair):
    make, made = drifted_pair
    run = make(1.0)

    def broken() -> WorkerProcess:
        w = _worker("candidate")
        made.append(w)
        os.kill(w.proc.pid, signal.SIGKILL)  # dies on its own: the parent sees it gone at its first request
        w.proc.wait()
        return w

    _drift_recheck(run, broken)
    assert run.obs.timing_failure is not None and run.obs.timing_failure.flag == "reference_drift"
    assert "error" in run.obs.timing["drift_recheck"]


SIXFOLD_TASK = '''"""Drift re-check fixture: the same product and tanh computed six times and summed."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features, features) / features**0.5)

    def forward(self, x):
        return sum(torch.tanh(x @ self.weight) for _ in range(6))


def get_inputs():
    return [torch.randn(96, 256)]


def get_init_inputs():
    return [256]
'''

COMPUTE_ONCE = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features, features) / features**0.5)

    def forward(self, x):
        return 6.0 * torch.tanh(x @ self.weight)
'''


def test_a_reference_slower_than_a_copy_of_itself_beside_the_twin_is_not_trusted(fast_config, monkeypatch, tmp_path):
    """Issue 40: another program slowing the reference's process (270x for an honest rewrite on a loaded 2-core
    machine) is not the candidate's doing, so the re-check clears the drift; but when the reference also ran slower
    than the twin beside it, the speedup is inflated, and the pair is kept with ``reference_slowed`` (suspect: not
    verified). Simulated here with a twin that is honestly faster than the reference (it computes once what the
    reference computes six times: about 4-5x), so that the reference looks slower than its "copy". The drift
    limit is 100%, as in the fixture above: the reference's paired time beside the candidate and beside the twin
    moves by tens of percent on a loaded 2-core machine (28% in one CI run), while the twin's speedup (> 2x
    flags) stays far above it."""
    from cudal1.harness import Candidate, load_suite
    from cudal1.harness.flags import verified

    (tmp_path / "sixfold_product.py").write_text(SIXFOLD_TASK)
    task = next(t for t in load_suite(f"dir:{tmp_path}") if t.name == "sixfold_product")
    fast = Candidate(source=COMPUTE_ONCE, task=task.name)
    for module in (pair, recheck):
        monkeypatch.setattr(module, "drift_limit", lambda summary, device="cuda", yardstick_ms=None: 1.0)
    monkeypatch.setattr(recheck, "reference_candidate", lambda t: fast)  # the twin: faster than the reference
    made: list[WorkerProcess] = []
    try:
        side = ReferenceSide.start(_worker("reference"), task, fast_config, "cpu")
        assert isinstance(side, ReferenceSide), side
        made.append(side.worker)
        cand = _worker("candidate")
        made.append(cand)
        candidate = reference_candidate(task)  # the module's own name, not the patched one
        obs = Observations(task=task.name, task_hash=task.hash, candidate_hash="x", baseline="eager", device="cpu")
        run_pair(side, cand, task, candidate, fast_config, obs, static=analyse(candidate.source), extensions_dir=None)
        assert obs.summary is not None
        obs.timing_failure = Failure("rejected", "the reference ran slower beside this candidate", "reference_drift")
        run = _Run(side, cand, task, candidate, fast_config, obs)
        _drift_recheck(run, lambda: made.append(_worker("candidate")) or made[-1])
    finally:
        for w in made:
            w.close()
    info = obs.timing["drift_recheck"]
    assert info["cleared"] and info["twin_speedup"] > 2.0, info
    assert obs.timing_failure is None and "reference_slowed" in obs.flags, (obs.flags, info)
    assert not verified("ok", obs.flags)
