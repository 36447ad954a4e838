"""Evaluators: the dispatch logic with scripted lanes (milliseconds), the actor body without Ray (two
drivers' chunks), then a real local Ray instance (3 CPUs, no dashboard) against the local pool on tiny CPU
tasks: a correct rewrite, a wrong one, a crash; two ranks of a run sharing rank 0's actors (in one process
here; tests/policy/test_shared_ray_pool.py runs two under accelerate launch).

The Ray tests share one module-scoped RayEvaluator, which starts Ray itself, and run in file order: the
last ones kill its actors and close it. They are marked slow: each pair starts a worker that imports torch
(~4 CPU-s), so on 2 cores the file takes about 80 s, most of it in those Ray tests."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore, load_suite
from cudal1.policy import evaluators, ray_evaluator, shared_pool
from cudal1.policy.evaluators import Evaluator, EvaluatorError, LocalEvaluator, make_evaluator
from cudal1.policy.ray_evaluator import (
    RayEvaluator,
    _ActorLost,
    _ChunkFailed,
    _dispatch,
    _PoolActor,
    actor_options,
)

# a local instance needs no copy of the project's environment per worker (Ray's `uv run` hook; ~5 s each)
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray")

FIXTURES = Path(__file__).parents[1] / "harness" / "fixtures"
TASK = next(t for t in load_suite(f"dir:{FIXTURES / 'tasks'}") if t.name == "tiny_linear_relu")


def cand(name: str) -> Candidate:
    return Candidate(source=(FIXTURES / "candidates" / f"{name}.py").read_text(), task=TASK.name, origin="test")


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> EvalConfig:
    return EvalConfig(device="cpu", trials=2, time_budget_s=0.05, buckets=3, min_rounds=3, max_rounds=10,
                      attempts=1, cpu_threads=1, compile_timeout_s=60, run_timeout_s=30,
                      cache_dir=str(tmp_path_factory.mktemp("cache")))


# -- dispatch, scripted lanes ----------------------------------------------------------------------
def fake_result(i: int) -> EvalResult:
    return EvalResult(task=f"t{i}", status="incorrect")


def lane_sleeping(seconds: float, seen: list[int]):
    def lane(chunk, on_result):
        for i in chunk:
            time.sleep(seconds)
            seen.append(i)
            on_result(i, fake_result(i))
    return lane


def test_dispatch_feeds_lanes_as_they_free_up():
    slow, quick, got = [], [], {}
    failed, lost = _dispatch({0: lane_sleeping(0.2, slow), 1: lane_sleeping(0.005, quick)}, range(24),
                             lambda i, r: got.setdefault(i, r), max_chunk=4)
    assert failed == {} and lost == []
    assert sorted(got) == list(range(24)) and all(got[i].task == f"t{i}" for i in got)
    assert len(quick) > 3 * len(slow), (slow, quick)  # not a static split


def test_dispatch_chunks_are_at_most_a_fair_share():
    sizes = []

    def lane(chunk, on_result):
        sizes.append(len(chunk))
        for i in chunk:
            on_result(i, fake_result(i))

    _dispatch({0: lane, 1: lane, 2: lane}, range(5), lambda i, r: None, max_chunk=4)
    assert max(sizes) == 2 and sum(sizes) == 5


def test_dispatch_requeues_a_lost_lanes_pairs_once():
    done, got = [], {}

    def dies(chunk, on_result):
        on_result(chunk[0], fake_result(chunk[0]))  # measured before the death: kept, not re-run
        raise _ActorLost("actor 0 died")

    failed, lost = _dispatch({0: dies, 1: lane_sleeping(0.01, done)}, range(6), lambda i, r: got.setdefault(i, []).append(r))
    assert failed == {} and lost == [0]
    assert sorted(got) == list(range(6)) and all(len(v) == 1 for v in got.values())


def test_dispatch_reports_a_pair_that_fails_twice():
    def dies(chunk, on_result):
        raise _ActorLost("died: SIGKILL")

    failed, lost = _dispatch({0: dies, 1: dies}, [0], lambda i, r: None)
    assert sorted(lost) == [0, 1] and failed[0].startswith("failed twice") and "SIGKILL" in failed[0]

    def harness_bug(chunk, on_result):
        raise _ChunkFailed("the harness raised")

    failed, lost = _dispatch({0: harness_bug}, [0, 1], lambda i, r: None)
    assert lost == [] and set(failed) == {0, 1}
    failed, _ = _dispatch({}, [3], lambda i, r: None)
    assert "no live Ray actor" in failed[3]


def test_actor_options_ask_one_gpu_per_actor_on_cuda():
    assert actor_options(EvalConfig(device="cuda"))["num_gpus"] == 1
    assert actor_options(EvalConfig(device="cuda:3"))["num_gpus"] == 1
    assert "num_gpus" not in actor_options(EvalConfig(device="cpu"))
    assert actor_options(EvalConfig())["max_restarts"] == 0  # the driver re-queues, Ray does not re-run
    # a poll and a call in flight per driver: 8 ranks sharing an actor never wait for a thread
    assert actor_options(EvalConfig(), drivers=8)["max_concurrency"] >= 16


def test_make_evaluator_picks_ray_only_with_an_address(monkeypatch, fast):
    made = []
    monkeypatch.setattr(ray_evaluator, "RayEvaluator", lambda cfg, **kw: made.append(("ray", kw)))
    monkeypatch.setattr(evaluators, "LocalEvaluator", lambda cfg, **kw: made.append(("local", kw)))
    make_evaluator(fast, ray_address="auto", num_actors=2)
    make_evaluator(fast, cpu_lanes=2)
    make_evaluator(fast, ray_address="")
    assert made == [("ray", {"address": "auto", "store": None, "num_actors": 2}),
                    ("local", {"store": None, "cpu_lanes": 2}), ("local", {"store": None})]


def test_the_recipes_lanes_per_gpu_reach_the_evaluator_on_cuda_only(monkeypatch, fast):
    from cudal1.policy import pipeline
    from cudal1.policy.recipe import Recipe

    made = []
    monkeypatch.setattr(evaluators, "make_evaluator", lambda cfg, **kw: made.append(kw))
    for device, ray_address in (("cuda", None), ("cuda", "auto"), ("cpu", None)):
        recipe = Recipe.from_dict({"eval": {"lanes_per_gpu": 2, "cpu_lanes": 3, "ray_address": ray_address}})
        pipeline._make_evaluator(recipe, EvalConfig(device=device), store=None)
    assert [kw.get("lanes_per_gpu") for kw in made] == [2, 2, None]
    assert made[2]["cpu_lanes"] == 3 and "cpu_lanes" not in made[0]


def test_the_recipes_warm_spares_reach_the_evaluator_on_cuda_only(monkeypatch, fast):
    """``eval.warm_spares`` reaches a GPU pool (local or Ray); the pool's default is left to the pool, and a CPU
    evaluator never gets it."""
    from cudal1.policy import pipeline
    from cudal1.policy.recipe import Recipe

    made = []
    monkeypatch.setattr(evaluators, "make_evaluator", lambda cfg, **kw: made.append(kw))
    for device, ray_address, warm in (("cuda", None, "libraries"), ("cuda", "auto", "libraries"),
                                      ("cpu", None, "libraries"), ("cuda", None, "context")):
        recipe = Recipe.from_dict({"eval": {"warm_spares": warm, "ray_address": ray_address}})
        pipeline._make_evaluator(recipe, EvalConfig(device=device), store=None)
    assert [kw.get("warm_spares") for kw in made] == ["libraries", "libraries", None, None]


def test_a_local_evaluator_hands_warm_spares_to_its_pool(monkeypatch, fast):
    seen = {}

    class FakePool:
        def __init__(self, config, **kw):
            seen.update(kw)

    monkeypatch.setattr(evaluators, "EvalPool", FakePool)
    evaluators.LocalEvaluator(fast, warm_spares="libraries")
    assert seen["warm_spares"] == "libraries" and seen["keep_warm"] is True
    assert seen["fork_workers"] is None  # the pool's own default for its device
    evaluators.LocalEvaluator(fast, fork_workers=True)
    assert seen["fork_workers"] is True


def test_the_recipes_fork_workers_reach_the_evaluator_when_set(monkeypatch, fast):
    """``eval.fork_workers`` reaches the pool on either device (local or Ray) when the recipe sets it; unset, the
    pool keeps its own default (forked on a CPU, started on a GPU)."""
    from cudal1.policy import pipeline
    from cudal1.policy.recipe import Recipe

    made = []
    monkeypatch.setattr(evaluators, "make_evaluator", lambda cfg, **kw: made.append(kw))
    for device, ray_address, fork in (("cuda", None, True), ("cuda", "auto", True), ("cpu", None, False),
                                      ("cuda", None, None)):
        recipe = Recipe.from_dict({"eval": {"fork_workers": fork, "ray_address": ray_address}})
        pipeline._make_evaluator(recipe, EvalConfig(device=device), store=None)
    assert [kw.get("fork_workers", "unset") for kw in made] == [True, True, False, "unset"]


@pytest.mark.slow
def test_pool_actor_keeps_each_drivers_chunks_apart(fast):
    """The actor body without Ray: chunks of two drivers, queued at once, each polled by its own ticket."""
    actor = _PoolActor(json.dumps(fast.to_dict()), cpu_lanes=1)
    a = actor.start([[TASK.to_json(), cand("correct_rewrite").to_json()]])
    b = actor.start([[TASK.to_json(), cand("wrong_values").to_json()], [TASK.to_json(), cand("segfault").to_json()]])
    assert a != b

    def drain(ticket: int) -> list[list]:
        items: list[list] = []
        while not items or items[-1][0] == "result":
            items += actor.results(ticket, 30.0)
        return items

    got_b, got_a = drain(b), drain(a)  # b polled first: a's results wait in a's queue meanwhile
    assert [(k, i) for k, i, _ in got_a] == [("result", 0), ("done", -1)]
    assert EvalResult.from_json(got_a[0][2]).status == "ok"
    assert sorted(i for k, i, _ in got_b if k == "result") == [0, 1] and got_b[-1][0] == "done"
    statuses = {i: EvalResult.from_json(t).status for k, i, t in got_b if k == "result"}
    assert statuses == {0: "incorrect", 1: "runtime_error"}
    (kind, _, why), = actor.results(a, 0.1)  # a finished chunk is forgotten
    assert kind == "error" and "no chunk" in why
    actor._pool.close()


# -- a real local Ray instance ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ResultStore:
    return ResultStore(tmp_path_factory.mktemp("store") / "results.sqlite")


@pytest.fixture(scope="module")
def ray_ev(fast, store):
    assert not ray.is_initialized()
    # 3 logical CPUs: the module's 2 actors plus one more evaluator's actor, whatever order tests run in
    ev = RayEvaluator(fast, store=store, num_actors=2, init_kwargs={"num_cpus": 3, "log_to_driver": False})
    print(f"Ray start-up: {ev.startup_s}")
    assert ev.startup_s["ray_init"] < 60 and ev.startup_s["actors"] < 60
    yield ev
    ev.close()


@pytest.mark.slow
def test_ray_matches_local_keeps_order_and_stores_as_results_arrive(ray_ev, store, fast):
    assert isinstance(ray_ev, Evaluator)
    pairs = [(TASK, cand("wrong_values")), (TASK, cand("correct_rewrite")), (TASK, cand("segfault"))]
    out: list[list[EvalResult]] = []
    worker = threading.Thread(target=lambda: out.append(ray_ev.evaluate(pairs, run="ray")))
    worker.start()
    counts = set()
    while worker.is_alive():
        counts.add(len(store.results(run="ray")))
        time.sleep(0.05)
    (got,) = out
    assert [r.status for r in got] == ["incorrect", "ok", "runtime_error"], [r.reason for r in got]
    assert [r.candidate_hash for r in got] == [c.hash for _, c in pairs]
    assert counts & {1, 2}, f"results reached the store only at the end: {counts}"
    assert [store.lookup(t, c, fast) for t, c in pairs] == got
    t0 = time.monotonic()
    assert ray_ev.evaluate(pairs, run="ray") == got and time.monotonic() - t0 < 2  # read back, not re-run
    with LocalEvaluator(fast, cpu_lanes=2) as local:
        assert [r.status for r in local.evaluate(pairs)] == [r.status for r in got]
    with pytest.raises(RuntimeError, match="closed"):
        local.evaluate(pairs)


@pytest.mark.slow
def test_ranks_share_rank_0s_actors(ray_ev, fast, monkeypatch):
    """Two ranks of one run, here in one process: rank 1 uses rank 0's named actor, never starts its own."""
    share = {"world_size": 2, "pool_name": "test-share"}
    owner = RayEvaluator(fast, num_actors=1, rank=0, release_timeout_s=60, **share)
    try:
        assert owner.share.owner and owner.share.namespace.startswith("cudal1-pool-")
        assert owner.share.generation == 0
        with monkeypatch.context() as m:  # the rank 0 of another run with the same pool name (another process)
            m.setattr(shared_pool, "_generations", {})
            with pytest.raises(RuntimeError, match="already running.*another pool_name"):
                RayEvaluator(fast, num_actors=1, rank=0, **share)
        with pytest.raises(ValueError, match="differs from that of rank 0.*time_budget_s"):
            RayEvaluator(fast.replace(time_budget_s=1.0), rank=1, **share)
        free = ray.available_resources().get("CPU", 0)
        with RayEvaluator(fast, rank=1, **share) as other:
            assert not other.share.owner and other.actor_info == owner.actor_info
            assert ray.available_resources().get("CPU", 0) == free  # no actor of its own
            (res,) = other.evaluate([(TASK, cand("correct_rewrite"))], run="rank1")
            assert res.status == "ok", res.reason
        assert ray.get(owner.actors[0].info.remote(), timeout=30) == owner.actor_info[0]  # rank 1 left it alive
    finally:
        t0 = time.monotonic()
        owner.close()
    assert time.monotonic() - t0 < 30  # rank 1 had closed: no wait for it
    with pytest.raises(RuntimeError, match="did not appear within 1 s.*rank 0's log"):  # rank 1's second pool
        RayEvaluator(fast, rank=1, attach_timeout_s=1, **share)


@pytest.mark.slow
def test_a_killed_actors_pairs_run_on_the_other(ray_ev, store, monkeypatch):
    pairs = [(TASK, cand("wrong_shape")), (TASK, cand("nan_output"))]
    victim = ray_ev.actors[0]
    # kill the victim mid-pair: once both actors have accepted their chunk (two tickets back from ray.get). A
    # timer (2.5 s) missed when both pairs finished sooner (seen in a clean-clone run of the whole suite)
    real_get, tickets = ray.get, []

    def get(*args, **kwargs):
        out = real_get(*args, **kwargs)
        if isinstance(out, int):
            tickets.append(out)
            if len(tickets) == 2:
                ray.kill(victim)
        return out

    monkeypatch.setattr(ray, "get", get)
    got = ray_ev.evaluate(pairs, run="kill")
    monkeypatch.undo()
    assert [r.status for r in got] == ["incorrect", "incorrect"], [r.reason for r in got]
    assert len(ray_ev.actors) == 1 and victim not in ray_ev.actors
    assert len(store.results(run="kill")) == 2


@pytest.mark.gpu
@pytest.mark.slow
def test_one_actor_per_gpu(ray_ev, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    cfg = EvalConfig(device="cuda", trials=2, time_budget_s=0.05, attempts=1, cache_dir=str(tmp_path))
    with RayEvaluator(cfg) as ev:
        visible = [info["cuda_visible_devices"] for info in ev.actor_info.values()]
        assert len(visible) == torch.cuda.device_count() and len(set(visible)) == len(visible)
        assert all(r.status == "ok" for r in ev.evaluate([(TASK, cand("correct_rewrite"))] * len(visible)))
    assert ray.is_initialized()  # not started by that evaluator: left running


@pytest.mark.slow
def test_close_kills_actors_and_keeps_a_ray_it_did_not_start(ray_ev, fast):
    with RayEvaluator(fast, num_actors=1) as other:
        (actor,) = other.actors
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(actor.info.remote(), timeout=30)
    assert ray.is_initialized()
    with pytest.raises(RuntimeError, match="closed"):
        other.evaluate([(TASK, cand("correct_rewrite"))])
    if not ray.cluster_resources().get("GPU"):
        with pytest.raises(RuntimeError, match="cluster has 0 GPU"):
            RayEvaluator(EvalConfig(device="cuda"))


@pytest.mark.slow
def test_no_actor_left_is_a_clear_error_then_close_shuts_down_its_ray(ray_ev, store):
    for actor in list(ray_ev.actors):  # one or two are left, by the order the tests ran in
        ray.kill(actor)
    with pytest.raises(EvaluatorError, match="0 Ray actor.s. remain") as err:  # the call finds them dead
        ray_ev.evaluate([(TASK, cand("raises"))], run="none-left")
    assert "create a new RayEvaluator" in str(err.value) and "died" in str(err.value)
    assert err.value.results == [None]
    assert ray_ev.actors == []
    with pytest.raises(EvaluatorError, match="no live Ray actor was left to run it") as err:  # none to try
        ray_ev.evaluate([(TASK, cand("raises"))], run="none-left")
    assert err.value.results == [None] and "create a new RayEvaluator" in str(err.value)
    with pytest.raises(RuntimeError, match="did not start within 1.5 s"):  # 4 actors, 3 CPUs
        RayEvaluator(ray_ev.config, num_actors=4, start_timeout_s=1.5)
    ray_ev.close()
    assert not ray.is_initialized()
