"""The timing rules of issue 40: a candidate's figure covers all the work its outputs need, its time is the
parent's to measure, and nothing of the candidate runs while the reference is timed.

One adversarial candidate per class (fixtures/timing/), each verified ``ok`` with a large speedup by the harness
before these rules (main at a1261b4, on this 2-core CPU: shifted work 6.6x, times reported short 31x, helpers that
load the machine while the candidate waits 79x, a ``_thread`` thread left alive ok and unflagged), each next to a
legitimate twin that must stay ``ok`` with its honest speedup. The assertions are about the effect that matters
(no inflated verified speedup; the rule that names it), not about how it was stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalPool, EvalResult, Task, load_suite, process, reference_candidate

FIX = Path(__file__).parent / "fixtures"
INFLATED = 1.5  #: a verified speedup above this, for a candidate that computes what the reference computes, is a win


@dataclass(frozen=True)
class TimingCase:
    """One candidate of the timing rules: its fixture (``fixtures/timing/<name>.py``, or ``reference`` for the task's
    own reference), its task and the torch threads of the evaluation."""

    rule: str
    kind: str  # "adversarial" | "legitimate"
    name: str
    task: str
    threads: int = 1


CASES = [
    TimingCase("shifted work", "adversarial", "shifted_work", "tiny_linear_relu"),
    TimingCase("shifted work", "legitimate", "compute_once", "twice_product"),
    TimingCase("short-reported times", "adversarial", "forge_short", "tiny_linear_relu"),
    TimingCase("short-reported times", "legitimate", "warm_workspace", "tiny_linear_relu"),
    TimingCase("helpers while idle", "adversarial", "fork_helpers", "twice_product", threads=2),
    TimingCase("helpers while idle", "legitimate", "reference", "twice_product", threads=2),
    TimingCase("native threads", "adversarial", "native_thread", "tiny_linear_relu"),
    TimingCase("native threads", "legitimate", "../integrity/joined_thread", "tiny_linear_relu"),
]


def tasks() -> dict[str, Task]:
    found = {t.name: t for t in load_suite(f"dir:{FIX / 'tasks'}")}
    found.update({t.name: t for t in load_suite(f"dir:{FIX / 'timing_tasks'}")})
    return found


def case_candidate(case: TimingCase, task: Task) -> Candidate:
    if case.name == "reference":
        return reference_candidate(task)
    return Candidate(source=(FIX / "timing" / f"{case.name}.py").read_text(), task=task.name, origin="test")


def case_id(case: TimingCase) -> str:
    return f"{case.rule}-{case.kind}-{Path(case.name).name}"


def evaluate_cases(config, cases: list[TimingCase]) -> dict[str, EvalResult]:
    """Every case, one pool per thread count (one CPU lane: the cases are about timing)."""
    by_task = tasks()
    out: dict[str, EvalResult] = {}
    for threads in sorted({c.threads for c in cases}):
        group = [c for c in cases if c.threads == threads]
        pool = EvalPool(config.replace(cpu_threads=threads))
        pairs = [(by_task[c.task], case_candidate(c, by_task[c.task])) for c in group]
        out.update(zip([case_id(c) for c in group], pool.map(pairs), strict=True))
    return out


@pytest.fixture(scope="module")
def verdicts(fast_config) -> dict[str, EvalResult]:
    return evaluate_cases(fast_config, CASES)


def _inflated(res: EvalResult) -> bool:
    return res.status == "ok" and res.verified and (res.speedup or 0.0) > INFLATED


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "adversarial"], ids=case_id)
def test_no_adversarial_timing_case_wins_a_verified_speedup(verdicts, case):
    res = verdicts[case_id(case)]
    assert not _inflated(res), (res.status, res.speedup, res.flags, res.timing.get("attempts"))


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "legitimate"], ids=case_id)
def test_legitimate_twins_stay_ok_with_their_honest_speedup(verdicts, case):
    res = verdicts[case_id(case)]
    assert res.status == "ok", (res.reason, res.flags)
    from cudal1.harness.flags import kind_of

    # verified, or only its thread import's hint (``threads``, suspect) beside measurement and descriptive flags
    assert all(kind_of(f) in ("measurement", "descriptive") for f in set(res.flags) - {"threads"}), res.flags
    if case.name == "compute_once":  # computes once what the reference computes twice: about 1.5-1.6x on one core
        charged = res.timing["clock_charged_ms_per_call"]
        assert charged <= 0.05 * res.timing["cand_ms"], res.timing["attempts"]  # no rule took it away ...
        # ... and it shows, unless the machine was visibly disturbed (once in a dozen runs on the 2-core VM, 1.03x
        # with buckets 27% apart)
        chosen = res.timing["attempts"][res.timing["attempt_chosen"]]
        assert res.speedup >= 1.3 or chosen["ratio_spread"] > 0.2, (res.speedup, res.timing.get("attempts"))
    elif case.kind == "legitimate" and "joined_thread" in case.name:  # a thread started and joined each call:
        assert res.speedup <= INFLATED  # about 1 ms a call on this machine, honestly slow on a 0.05 ms task
    else:  # the same work as the reference
        assert 0.5 <= res.speedup <= INFLATED, (res.speedup, res.timing.get("attempts"))


def test_a_batch_is_timed_as_a_whole(verdicts):
    """Shifted work: the first call of a burst computes, the middle ones return unfilled buffers, the last fills
    them. Per-call medians said 6.6x; a round's mean call is honest. The candidate guesses the batch's length
    (8 calls); when a loaded machine makes the harness choose shorter batches, its last unfilled buffers are read
    as they are, and the check of timed outputs answers ``incorrect`` (seen once in a full-suite run on the 2-core
    VM): not paid either, and by a rule of the harness, so that verdict stands too; anything else fails."""
    res = verdicts[case_id(CASES[0])]
    if res.status == "incorrect":
        assert res.reason.startswith("a timed call's output differs from the reference's"), res.reason
        return
    assert res.status == "ok" and res.speedup < INFLATED, (res.status, res.reason, res.speedup,
                                                           res.timing.get("attempts"))


def test_the_parents_clock_is_charged_for_times_reported_short(verdicts):
    """Times reported 0.3 ms short (never below 1 us) on a 0.05 ms task: before, within the 1 ms allowance and paid
    31-71,000x; now the excess the parent's clock saw is added to the candidate's time (its digests off the clock,
    committed batches: read 1.3-2.3x before that, 0.97-1.16x after, 2026-12-04), or, where the machine's noise leaves
    too much of it uncharged, the figure is ``timing_unresolved`` and not trusted."""
    res = verdicts[case_id(CASES[2])]
    assert res.timing["committed_batches"]  # a CPU task of small outputs: digested by the parent, off the clock
    if res.status == "ok" and "timing_unresolved" in res.flags:  # the machine's noise hid it: not trusted either
        assert not res.verified, res.flags
    elif res.status == "ok":
        assert res.timing["clock_charged_ms_per_call"] > 0.5 * res.timing["ref_ms"], res.timing["attempts"]
        assert res.speedup < INFLATED
    else:
        assert "timing_disagrees" in res.flags, (res.status, res.reason)


def test_a_native_thread_left_alive_is_counted(verdicts):
    """``_thread`` threads are not in ``threading``'s list; ``/proc/self/task`` lists them."""
    res = verdicts[case_id(CASES[6])]
    assert res.status == "rejected" and "threads_left_running" in res.flags, (res.status, res.reason, res.flags)


def test_the_reference_drift_check_runs_on_cpu_too(fixture_tasks, fast_config):
    """A real CPU pair (the task's reference against itself) whose reference is then made out to have run 10x
    faster alone than beside the candidate: on CPU too the pair is rejected ``reference_drift`` (before, the drift
    was computed on a GPU only, and on CPU helpers or another program's load were paid as speedup unseen). Without
    a twin to re-check beside, the rejection stands (``tests/harness/test_drift_recheck.py`` has the re-check)."""
    import dataclasses

    from cudal1.harness.pair import run_pair
    from cudal1.harness.reference_side import ReferenceSide
    from cudal1.harness.static_checks import analyse
    from cudal1.harness.verdict import Observations, assemble

    task = fixture_tasks["tiny_matmul_cpu"]
    side = ReferenceSide.start(process.WorkerProcess("reference", {"CUDA_VISIBLE_DEVICES": ""}), task, fast_config,
                               "cpu")
    assert isinstance(side, ReferenceSide), side
    side = dataclasses.replace(side, alone_ms=[m / 10.0 for m in side.alone_ms])
    cand = process.WorkerProcess("candidate", {"CUDA_VISIBLE_DEVICES": ""})
    try:
        candidate = reference_candidate(task)
        obs = Observations(task=task.name, task_hash=task.hash, candidate_hash="x", baseline="eager", device="cpu")
        run_pair(side, cand, task, candidate, fast_config, obs, static=analyse(candidate.source), extensions_dir=None)
        res = assemble(obs)
    finally:
        cand.close()
        side.close()
    assert res.status == "rejected" and "reference_drift" in res.flags, (res.status, res.reason, res.flags)
    assert "busy" in res.reason and res.timing["reference_drift"] > 5.0


def _cpu_ticks(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_freeze_stops_every_process_of_the_worker_and_thaw_resumes_them(fixture_tasks, fast_config):
    """The mechanism itself: a candidate whose import forks a spinning helper; frozen, no process of its worker
    gets CPU time; thawed, the helper spins again."""
    source = (FIX / "timing" / "fork_helpers.py").read_text().replace("HELPERS = 3", "HELPERS = 1")
    task = tasks()["twice_product"]
    w = process.WorkerProcess("candidate", {"CUDA_VISIBLE_DEVICES": ""}, sandboxed=process.sandbox.detect().available)
    try:
        rep = w.request("load", {"task_source": task.source, "candidate_source": source, "device": "cpu", "seed": 1,
                                 "cpu_threads": 1, "rtol": None, "atol": None, "extensions_dir": None,
                                 "stateful": False}, 120)
        assert not rep.is_error, rep.reason
        pids = w.processes()
        assert len(pids) >= 2 + (2 if w.sandboxed else 0), pids  # the worker, its helper (and bwrap's two)
        assert w.freeze()
        assert all(process.process_state(p) in ("T", "t", None) for p in pids)
        before = _cpu_ticks(pids)
        time.sleep(0.4)
        assert _cpu_ticks(pids) == before, "a frozen worker's process got CPU time"
        w.thaw()
        time.sleep(0.4)
        assert _cpu_ticks(pids) > before, "the thawed helper did not run again"
    finally:
        w.close()
