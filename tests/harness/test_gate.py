"""The device gate: lanes of one device overlap their work, and each timing phase has the device alone (issue 41).

Units on threads first (what the gate allows, in which order), then two CPU lanes of a real pool: their work
overlaps, and no other lane says a word to its workers while a lane times."""

from __future__ import annotations

import threading
import time

import pytest

from cudal1.harness import EvalPool, reference_candidate
from cudal1.harness.gate import DeviceGate, PairTurns
from cudal1.harness.pool import out_of_device_memory
from cudal1.harness.process import WorkerProcess
from cudal1.harness.types import EvalResult


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_work_overlaps_and_timing_waits_for_it_to_end():
    gate = DeviceGate()
    events: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    def worker(name: str) -> None:
        with gate.work(name):
            events.append(f"{name} in")
            inside.set()
            release.wait(5)
            events.append(f"{name} out")

    a, b = _in_thread(lambda: worker("a")), _in_thread(lambda: worker("b"))
    inside.wait(5)
    time.sleep(0.05)
    assert sorted(events) == ["a in", "b in"]  # two lanes' work at once

    def timer() -> None:
        with gate.timing("t"):
            events.append("t timing")

    t = _in_thread(timer)
    time.sleep(0.1)
    assert "t timing" not in events  # not beside work
    release.set()
    for th in (a, b, t):
        th.join(5)
    assert events[-1] == "t timing" and events.count("t timing") == 1


def test_a_waiting_timer_goes_before_new_work_and_work_waits_for_timing():
    gate = DeviceGate()
    order: list[str] = []
    hold = threading.Event()
    in_work = threading.Event()
    timing = threading.Event()
    end_timing = threading.Event()

    def first() -> None:
        with gate.work("a"):
            in_work.set()
            hold.wait(5)

    def timer() -> None:
        with gate.timing("t"):
            order.append("timing")
            timing.set()
            end_timing.wait(5)
        order.append("timing over")

    def late_work() -> None:
        with gate.work("c"):
            order.append("late work")

    threads = [_in_thread(first)]
    in_work.wait(5)
    threads.append(_in_thread(timer))
    time.sleep(0.05)
    threads.append(_in_thread(late_work))  # arrives while the timer waits: it waits behind it
    time.sleep(0.05)
    assert order == []
    hold.set()
    timing.wait(5)
    time.sleep(0.05)
    assert order == ["timing"]  # the late work does not start beside the timing
    end_timing.set()
    for th in threads:
        th.join(5)
    assert order == ["timing", "timing over", "late work"] or order == ["timing", "late work", "timing over"]
    assert order.index("late work") > order.index("timing")


def test_timing_from_inside_work_lets_go_and_takes_it_back():
    """A lane times from inside its own work: two such lanes must not wait for each other for ever."""
    gate = DeviceGate()
    gate.keep_log = True
    quiesced: list[str] = []
    resumed: list[str] = []
    gate.quiesce, gate.resume = quiesced.append, resumed.append
    done: list[str] = []

    def lane(name: str) -> None:
        with gate.work(name):
            with gate.work(name):  # nested: one section
                time.sleep(0.05)
                with gate.timing(name):
                    time.sleep(0.05)
                assert gate._working >= 1  # back inside work
            done.append(name)

    threads = [_in_thread(lambda n=n: lane(n)) for n in ("a", "b")]
    for th in threads:
        th.join(10)
    assert sorted(done) == ["a", "b"] and sorted(quiesced) == sorted(resumed) == ["a", "b"]
    timings = [(s, e) for _, mode, s, e in gate.log if mode == "timing"]
    assert len(timings) == 2
    (s1, e1), (s2, e2) = sorted(timings)
    assert e1 <= s2  # one at a time
    assert gate._working == 0 and not gate._timing


def test_an_error_inside_timing_frees_the_device():
    gate = DeviceGate()
    with gate.work("a"):
        with pytest.raises(RuntimeError):
            with gate.timing("a"):
                raise RuntimeError("batch failed")
        assert gate._working == 1 and not gate._timing
    assert gate._working == 0
    with gate.timing("b"):  # nothing left held
        pass


def test_a_lane_that_quiesces_wrongly_still_frees_the_device():
    resumed: list[str] = []
    gate = DeviceGate(quiesce=lambda lane: (_ for _ in ()).throw(OSError("spare died")), resume=resumed.append)
    with pytest.raises(OSError):
        with gate.timing("a"):
            pass
    assert not gate._timing and resumed == ["a"]  # what it may have stopped is let go
    with gate.work("b"):
        pass


def test_a_pair_alone_waits_for_the_pairs_beside_it_and_holds_new_ones_out():
    turns = PairTurns()
    order: list[str] = []
    inside, release, alone_in, alone_out = (threading.Event() for _ in range(4))

    def pair(name: str, hold: threading.Event | None = None) -> None:
        with turns.shared():
            order.append(f"{name} in")
            if hold is not None:
                inside.set()
                hold.wait(5)
            order.append(f"{name} out")

    def lone() -> None:
        with turns.alone():
            order.append("alone in")
            alone_in.set()
            alone_out.wait(5)
            order.append("alone out")

    threads = [_in_thread(lambda: pair("a", release))]
    inside.wait(5)
    threads.append(_in_thread(lone))
    time.sleep(0.05)
    threads.append(_in_thread(lambda: pair("late")))  # arrives while the lone pair waits: it waits behind it
    time.sleep(0.05)
    assert order == ["a in"]
    release.set()
    alone_in.wait(5)
    time.sleep(0.05)
    assert order == ["a in", "a out", "alone in"]  # the late pair does not start beside the lone one
    alone_out.set()
    for th in threads:
        th.join(5)
    assert order == ["a in", "a out", "alone in", "alone out", "late in", "late out"]
    assert turns.alone_count == 1 and turns._inside == 0 and not turns._alone


OOM = ("ModelNew.forward raised in timed call 3: OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. "
       "GPU 0 has a total capacity of 79.18 GiB of which 16.44 MiB is free.")


def _fake_pairs(pool: EvalPool, oom_once: set[str], reason: str = OOM):
    """``pool._run_on_lane`` replaced by a pair that takes 0.1 s and, for each task in ``oom_once``, fails the first
    time it runs with ``reason``; returns the log of runs ``(lane, task, start, end)``."""
    runs: list[tuple[str, str, float, float]] = []
    lock = threading.Lock()
    failed: set[str] = set()

    def run(lane, task, candidate, remaining=0, next_task=False):
        t0 = time.monotonic()
        time.sleep(0.1)
        with lock:
            runs.append((lane.name, task.name, t0, time.monotonic()))
            if task.name in oom_once and task.name not in failed:
                failed.add(task.name)
                return EvalResult(task=task.name, status="runtime_error", reason=reason, device="cuda")
        return EvalResult(task=task.name, status="ok", speedup=1.0, device="cuda")

    pool._run_on_lane = run  # type: ignore[method-assign]
    return runs


def test_a_pair_that_ran_out_of_gpu_memory_beside_other_lanes_runs_again_alone(fixture_tasks, fast_config,
                                                                                monkeypatch):
    """Lanes of one GPU hold their workers' memory side by side (five KernelBench self-pairs ran out of memory on
    three lanes of an 80 GB H100): such a pair runs again once the other lanes are between pairs and have let go of
    what they hold, and its verdict is that run's, the first run's reason kept. A failure of another kind is final."""
    from cudal1.harness.lanes import Lane

    closed: list[str] = []
    real_close = Lane.close
    monkeypatch.setattr(Lane, "close", lambda self: (closed.append(self.name), real_close(self))[1])
    tasks = [fixture_tasks["tiny_linear_relu"], fixture_tasks["tiny_matmul_cpu"]]
    pool = EvalPool(fast_config, cpu_lanes=2)
    runs = _fake_pairs(pool, {tasks[0].name})
    try:
        results = pool.map([(t, reference_candidate(t)) for t in tasks for _ in range(3)])
    finally:
        pool.close()
    assert [r.status for r in results] == ["ok"] * 6
    retried = [r for r in results if "retried_alone" in r.environment]
    assert len(retried) == 1 and retried[0].task == tasks[0].name and "CUDA out of memory" in retried[0].environment[
        "retried_alone"]
    assert len(runs) == 7 and pool.lanes[0].turns.alone_count == 1
    lone = [r for r in runs if r[1] == tasks[0].name]
    first_fail = min(lone, key=lambda r: r[2])
    again = sorted(lone, key=lambda r: r[2])[1]  # the run after the failure on the same lane
    assert again[0] == first_fail[0]
    others = [r for r in runs if r[0] != again[0]]
    assert not any(_overlaps((s, e), (again[2], again[3])) for _, _, s, e in others)  # nothing beside it
    other_lane = next(ln.name for ln in pool.lanes if ln.name != again[0])
    assert other_lane in closed  # the other lane let go of its reference and spares before the run alone


def test_out_of_memory_is_final_with_the_device_alone_and_other_failures_are_never_run_again(fixture_tasks,
                                                                                             fast_config):
    task = fixture_tasks["tiny_linear_relu"]
    alone = EvalPool(fast_config, cpu_lanes=1)  # one lane: the pair had the device to itself already
    runs = _fake_pairs(alone, {task.name})
    try:
        [res] = alone.map([(task, reference_candidate(task))])
    finally:
        alone.close()
    assert res.status == "runtime_error" and len(runs) == 1 and "retried_alone" not in res.environment
    two = EvalPool(fast_config, cpu_lanes=2)
    runs = _fake_pairs(two, {task.name}, reason="ModelNew.forward raised in trial call 1: ValueError: bad shape")
    try:
        [res] = two.map([(task, reference_candidate(task))])
    finally:
        two.close()
    assert res.status == "runtime_error" and len(runs) == 1
    assert out_of_device_memory(EvalResult(task="t", status="task_error", reason=f"the task failed: {OOM}"))
    assert not out_of_device_memory(EvalResult(task="t", status="ok", reason=OOM))


def _overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_two_cpu_lanes_overlap_work_but_never_speak_while_the_other_times(fixture_tasks, fast_config, monkeypatch):
    """Two tasks on two CPU lanes of one pool: the lanes' work overlaps (reference set-ups at least), every timed
    batch lies inside its own lane's timing phase, no request of the other lane (set-up, load, trial, ...) falls
    inside that phase, and the other lane's loaded candidate is stopped through it (its helpers must not run beside
    another pair's timing). Without the gate, the second lane's requests run beside the first's timed batches."""
    calls: list[tuple[int, str, float, float]] = []
    lock = threading.Lock()
    real = WorkerProcess.request

    def logged(self, op, payload, timeout, **kw):
        t0 = time.monotonic()
        try:
            return real(self, op, payload, timeout, **kw)
        finally:
            with lock:
                calls.append((threading.get_ident(), op, t0, time.monotonic()))

    monkeypatch.setattr(WorkerProcess, "request", logged)
    tasks = [fixture_tasks["tiny_linear_relu"], fixture_tasks["tiny_matmul_cpu"]]
    pool = EvalPool(fast_config.replace(attempts=1), cpu_lanes=2)
    gate = pool.lanes[0].gate
    assert all(ln.gate is gate for ln in pool.lanes)
    gate.keep_log = True
    idents: dict[str, int] = {}
    real_timing = gate.timing

    def timing(lane=""):
        idents[lane] = threading.get_ident()
        return real_timing(lane)

    gate.timing = timing  # type: ignore[method-assign]
    seen: list[tuple[str, str]] = []  # (timer, another lane's loaded candidate: stopped or running)
    real_quiesce = gate.quiesce

    def quiesce(timer: str) -> None:
        real_quiesce(timer)
        for ln in pool.lanes:
            if ln.name != timer and ln.current is not None and ln.current.proc.poll() is None:
                seen.append((timer, "stopped" if ln.current.frozen else "running"))

    gate.quiesce = quiesce
    results = pool.map([(t, reference_candidate(t)) for t in tasks for _ in range(3)])
    assert [r.status for r in results] == ["ok"] * 6, [(r.status, r.reason) for r in results]
    assert seen and {state for _, state in seen} == {"stopped"}, seen
    assert all(ln.current is None for ln in pool.lanes)
    timings = [(lane, s, e) for lane, mode, s, e in gate.log if mode == "timing"]
    works = [(lane, s, e) for lane, mode, s, e in gate.log if mode == "work"]
    assert len(idents) == 2 and len(timings) >= 8  # two references alone, six pairs
    # the lanes' work overlapped somewhere: what the gate is for
    assert any(_overlaps((s1, e1), (s2, e2)) for l1, s1, e1 in works for l2, s2, e2 in works if l1 < l2)
    by_thread = {v: k for k, v in idents.items()}
    for ident, op, s, e in calls:
        if op == "batch":  # every timed batch inside a timing phase of its own lane
            lane = by_thread.get(ident)
            assert any(ln == lane and ts <= s and e <= te for ln, ts, te in timings), (lane, op)
    for lane, ts, te in timings:
        other = [(op, s, e) for ident, op, s, e in calls if by_thread.get(ident) != lane]
        beside = [op for op, s, e in other if _overlaps((s, e), (ts, te))]
        assert beside == [], (lane, beside)
    assert gate._working == 0 and not gate._timing


def test_pool_settings_are_checked(fast_config):
    with pytest.raises(ValueError, match="at least 1"):
        EvalPool(fast_config, cpu_lanes=0)
    with pytest.raises(ValueError, match="lanes_per_gpu"):
        EvalPool(fast_config, lanes_per_gpu=0)
