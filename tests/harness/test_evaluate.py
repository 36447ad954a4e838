"""End-to-end evaluations on CPU with candidates written for each outcome."""

from __future__ import annotations

import statistics

import pytest

from cudal1.harness import Candidate, EvalPool, evaluate, reference_candidate

FAILURE_CASES = {
    # candidate fixture: (status, words the reason must contain)
    "wrong_values": ("incorrect", "outside tolerance"),
    "wrong_shape": ("incorrect", "shape"),
    "nan_output": ("incorrect", "NaN"),
    "raises": ("runtime_error", "kernel launch failed"),
    "os_exit": ("rejected", "os._exit"),  # seen by the static checks before it runs
    "abort": ("runtime_error", "SIGABRT"),  # not seen statically: the dead worker is the result
    "segfault": ("runtime_error", "SIGSEGV"),
    "syntax_error": ("compile_error", "syntax error"),
    "missing_modelnew": ("compile_error", "does not define ModelNew"),
    "wrong_ctor": ("runtime_error", "ModelNew(*get_init_inputs()) failed: TypeError"),
    "prints_fake_result": ("incorrect", "outside tolerance"),
}


@pytest.fixture(scope="module")
def failure_results(fixture_tasks, fast_config, candidate):
    task = fixture_tasks["tiny_linear_relu"]
    names = list(FAILURE_CASES)
    pool = EvalPool(fast_config, cpu_lanes=2)
    results = pool.map([(task, candidate(n, task.name)) for n in names])
    return dict(zip(names, results))


@pytest.mark.parametrize("name", list(FAILURE_CASES))
def test_bad_candidates_are_results_with_reasons(failure_results, name):
    res = failure_results[name]
    status, words = FAILURE_CASES[name]
    assert res.status == status, (res.status, res.reason)
    assert words in res.reason, res.reason
    assert res.speedup is None
    assert res.task == "tiny_linear_relu"


def test_printed_fake_results_are_not_taken_as_results(failure_results):
    res = failure_results["prints_fake_result"]
    assert res.speedup is None
    assert '"speedup": 100.0' in res.log_tail  # it did print, into the log


def test_infinite_loop_times_out_and_the_pool_goes_on(fixture_tasks, fast_config, candidate):
    task = fixture_tasks["tiny_linear_relu"]
    cfg = fast_config.replace(run_timeout_s=4.0)
    pool = EvalPool(cfg)
    hung, after = pool.map([(task, candidate("infinite_loop", task.name)), (task, reference_candidate(task))])
    assert hung.status == "timeout"
    assert "run time limit of 4 s" in hung.reason
    assert after.status == "ok"  # the dead worker was replaced


def test_identical_candidate_measures_about_one(fixture_tasks, fast_config):
    task = fixture_tasks["tiny_matmul_cpu"]
    res = evaluate(task, reference_candidate(task), fast_config.replace(time_budget_s=0.6, attempts=3))
    assert res.status == "ok", res.reason
    assert 0.8 <= res.speedup <= 1.25, res.timing
    lo, hi = res.speedup_ci
    assert lo <= res.timing["speedup_raw"] * 1.2 and hi >= res.timing["speedup_raw"] / 1.2
    assert res.correctness["trials"] >= 5
    assert res.correctness["max_abs_err"] == 0.0
    assert res.environment["torch"]
    assert res.ref_ms > 0 and res.cand_ms > 0
    assert res.timing["rounds"] % res.timing["buckets"] == 0
    # where the correctness phase went, on the parent's clock: each trial of each side and the comparisons, within it
    split = res.timing["correctness_s"]
    assert len(split["reference"]) == len(split["candidate"]) == res.correctness["trials"]
    assert min(split["reference"] + split["candidate"]) > 0 and split["judge"] >= 0
    assert sum(split["reference"] + split["candidate"]) + split["judge"] <= res.timing["phases_s"]["correctness"] + 0.01


def test_slow_candidate_measures_below_one(fixture_tasks, fast_config, candidate, monkeypatch):
    monkeypatch.setenv("CUDAL1_TIMING_DEBUG", "1")  # also records what the clock check was computed from
    task = fixture_tasks["tiny_linear_relu"]
    res = evaluate(task, candidate("slow", task.name), fast_config)
    assert res.status == "ok", res.reason
    assert res.speedup < 0.9
    assert res.cand_ms >= 19.0  # it sleeps 20 ms per call: the wall clock sees it
    # the debug record's batches reproduce the clock check of the reported attempt
    rounds = res.timing["per_round_clock"]["attempts"]
    assert len(rounds) == len(res.timing["attempts"])
    chosen = rounds[res.timing["attempt_chosen"]]
    n = res.timing["calls_per_batch"]
    assert all(rp >= rr and cp >= cr for rp, rr, cp, cr in chosen)  # the parent's window holds the timed calls
    excess = statistics.median(((cp - cr) - (rp - rr)) / n for rp, rr, cp, cr in chosen)
    assert excess == pytest.approx(res.timing["clock_check"]["excess_ms_per_call"])
    # and each trial's steps on each worker's own clock: the slow candidate's 20 ms sleeps show in its calls
    steps = res.timing["correctness_s"]["steps_ms"]
    assert len(steps) == res.correctness["trials"]
    assert all(s["cand"]["calls"] >= 2 * 19.0 and s["ref"]["calls"] < s["cand"]["calls"] for s in steps)


def test_correct_rewrite_with_other_parameter_names(fixture_tasks, fast_config, candidate):
    task = fixture_tasks["tiny_linear_relu"]
    res = evaluate(task, candidate("correct_rewrite", task.name), fast_config)
    assert res.status == "ok", res.reason
    assert res.correctness["max_rel_err"] <= 1e-4


def test_weights_are_randomised_away_from_default_init(fixture_tasks, fast_config, candidate):
    task = fixture_tasks["tiny_layernorm"]
    pool = EvalPool(fast_config)
    lazy, honest = pool.map([(task, candidate("layernorm_default_init_only", task.name)),
                             (task, candidate("layernorm_handwritten", task.name))])
    assert lazy.status == "incorrect", lazy.reason
    assert honest.status == "ok", honest.reason


def _live_worker_children(role: str = "candidate") -> list[int]:
    """Live worker processes of ``role`` started by this process (sandboxed ones run under bwrap: matched by
    their command line, which names this process's scratch)."""
    from cudal1.harness.process import LIVE

    return sorted(w.proc.pid for w in list(LIVE) if w.role == role and w.proc.poll() is None)


def test_spare_workers_are_used_and_cleaned_up(fixture_tasks, fast_config):
    task = fixture_tasks["tiny_linear_relu"]
    pool = EvalPool(fast_config, spares=2, fork_workers=False)
    results = pool.map([(task, reference_candidate(task))] * 3)
    assert [r.status for r in results] == ["ok"] * 3
    assert _live_worker_children() == []


def test_syntax_errors_are_found_without_a_worker(fixture_tasks, fast_config, candidate):
    task = fixture_tasks["tiny_linear_relu"]
    pool = EvalPool(fast_config)
    pool.lanes[0].take_candidate_worker = lambda: pytest.fail("a worker was started for unparseable source")
    pool.lanes[0].reference_for = lambda task: pytest.fail("a reference worker was started for unparseable source")
    bad = candidate("syntax_error")
    (res,) = pool.map([(task, bad)])
    assert res.status == "compile_error" and res.reason.startswith("syntax error at line")
    assert res.task == task.name and res.candidate_hash == bad.hash and res.wall_s < 1.0
    nul = Candidate(source="x = 1\0\n", task=task.name, origin="test")
    (res,) = pool.map([(task, nul)])
    assert res.status == "compile_error" and "null bytes" in res.reason


def test_keep_warm_pool_keeps_spares_between_calls_until_closed(fixture_tasks, fast_config):
    """A long-lived pool fed in batches (a trainer's reward function) starts the next call's workers ahead."""
    task = fixture_tasks["tiny_linear_relu"]
    with EvalPool(fast_config, spares=1, keep_warm=True, fork_workers=False) as pool:
        assert [r.status for r in pool.map([(task, reference_candidate(task))])] == ["ok"]
        warm = _live_worker_children()
        assert len(warm) == 1  # a spare is waiting for the next call
        assert [r.status for r in pool.map([(task, reference_candidate(task))])] == ["ok"]
        assert warm[0] not in _live_worker_children()  # the spare ran the pair (a worker runs one pair)
        assert len(_live_worker_children()) == 1  # and another one waits
        assert len(_live_worker_children("reference")) == 1  # the task's clean reference stays set up
    assert _live_worker_children() == [] and _live_worker_children("reference") == []


def test_without_keep_warm_no_worker_outlives_the_call(fixture_tasks, fast_config):
    task = fixture_tasks["tiny_linear_relu"]
    pool = EvalPool(fast_config, spares=1)
    pool.map([(task, reference_candidate(task))])
    assert _live_worker_children() == [] and _live_worker_children("reference") == []


@pytest.mark.slow
def test_compile_baseline_threads_are_the_harness_own(fixture_tasks, fast_config):
    """torch.compile of the reference starts compile-worker threads; they are not the candidate's."""
    task = fixture_tasks["tiny_linear_relu"]
    res = evaluate(task, reference_candidate(task), fast_config.replace(baseline="compile"))
    assert res.status == "ok", res.reason
    assert res.timing["baseline"] == "compile"


def test_a_stateful_reference_is_compared_from_identical_state(fast_config, candidate):
    """A reference that keeps a hidden state across calls (KernelBench's VanillaRNN) is not failed against itself:
    both models are put back to their state after construction before every compared and timed call."""
    from pathlib import Path

    from cudal1.harness import load_suite

    task = load_suite(f"dir:{Path(__file__).parent / 'fixtures' / 'stateful_tasks'}")[0]
    same, forgetful = EvalPool(fast_config).map([(task, reference_candidate(task)),
                                                 (task, candidate("rnn_ignores_state", task.name))])
    assert same.status == "ok" and "reference_stateful" in same.flags, (same.status, same.reason)
    assert forgetful.status == "incorrect", (forgetful.status, forgetful.reason)


def test_a_stored_result_is_read_back_only_while_the_library_code_is_unchanged(fixture_tasks, fast_config, tmp_path,
                                                                                monkeypatch):
    """A solution file that imports a kernel library keeps its source when the library's kernels change: its
    stored result then describes code that no longer runs, and the pool evaluates the pair again."""
    from cudal1.harness import pool as pool_mod
    from cudal1.harness.store import ResultStore

    task = fixture_tasks["tiny_linear_relu"]
    cand = reference_candidate(task)
    library = {"code": "v1"}
    monkeypatch.setattr(pool_mod, "library_digest", lambda source: library["code"])
    with ResultStore(tmp_path / "results.sqlite") as store:
        (first,) = EvalPool(fast_config).map([(task, cand)], store=store)
        assert first.build["library_digest"] == "v1"
        (again,) = EvalPool(fast_config).map([(task, cand)], store=store)
        assert again == first and len(store.results()) == 1  # same code: read back, not re-run
        library["code"] = "v2"  # the library's kernels changed under the same candidate source
        (fresh,) = EvalPool(fast_config).map([(task, cand)], store=store)
        assert len(store.results()) == 2 and fresh.build["library_digest"] == "v2" and fresh.wall_s != first.wall_s


def test_keep_warm_forking_pool_keeps_its_template_and_forks_a_worker_per_pair(fixture_tasks, fast_config):
    """The same with workers forked from a template (the CPU default where Linux allows): one template process
    lives across calls, every pair runs in a fresh child of it, and none is left after."""
    from cudal1.harness.template import templates_supported

    if not templates_supported():
        pytest.skip("templates need Linux")
    task = fixture_tasks["tiny_linear_relu"]
    with EvalPool(fast_config, keep_warm=True, fork_workers=True) as pool:
        assert [r.status for r in pool.map([(task, reference_candidate(task))] * 2)] == ["ok"] * 2
        tpl = pool.lanes[0].template
        assert tpl is not None and tpl.alive and tpl.forks == 2 and tpl.children() == set()
        pid = tpl.worker.proc.pid
        assert [r.status for r in pool.map([(task, reference_candidate(task))])] == ["ok"]
        assert pool.lanes[0].template is tpl and tpl.worker.proc.pid == pid and tpl.forks == 3
    assert tpl.worker.proc.poll() is not None and _live_worker_children() == []



def test_the_collector_is_settled_before_anything_is_timed(fixture_tasks, tmp_path, monkeypatch):
    """Both roles freeze what they hold out of the cyclic collector's reach (``gc.freeze``) once their model is
    built, before any trial or timed batch, so that no full collection of torch's hundreds of thousands of objects
    lands in a timed window (candidates may not import ``gc``: the static checks refuse it; the worker's commands run
    here in-process instead, as its protocol loop would call them)."""
    import gc

    from cudal1.harness import session as session_mod
    from cudal1.harness.candidate_session import CandidateSession
    from cudal1.harness.reference_session import ReferenceSession

    task = fixture_tasks["tiny_linear_relu"]
    cand = reference_candidate(task)
    settled: list[str] = []
    real = session_mod._settle_collector
    monkeypatch.setattr(session_mod, "_settle_collector", lambda: (settled.append("settled"), real()))
    try:
        ref = ReferenceSession(tmp_path / "ref", tmp_path / "ref-outbox")
        (tmp_path / "ref").mkdir()
        ref.setup({"seed": 1, "device": "cpu", "task_source": task.source})
        assert settled == [] and gc.get_freeze_count() == 0  # nothing frozen before the model is configured
        ref.configure({"baseline": "eager", "n": 2, "seeds": [3, 4]})
        assert settled == ["settled"] and gc.get_freeze_count() > 10_000
        gc.unfreeze()
        ses = CandidateSession(tmp_path / "cand", tmp_path / "cand-outbox")
        (tmp_path / "cand").mkdir()
        ses.load({"seed": 1, "device": "cpu", "task_source": task.source, "candidate_source": cand.source})
        assert settled == ["settled", "settled"] and gc.get_freeze_count() > 10_000
        ses._undo_patches()
    finally:
        gc.unfreeze()
