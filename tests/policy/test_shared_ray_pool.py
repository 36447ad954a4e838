"""The ranks of a run share one Ray evaluation pool (cudal1.policy.shared_pool through RayEvaluator).

The end-to-end test starts a local Ray head in this process (3 logical CPUs), then runs this file as a
script under ``accelerate launch --multi_gpu --num_processes 2`` (accelerate's torchrun launcher: on a CPU
it only starts the processes and sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT; ``--cpu`` would start
one process, or need MPI). Both ranks call ``make_evaluator`` as the training pipeline does, with the run's
one store path, twice in turn (the pipeline makes an evaluator per stage); each evaluator evaluates one of
the rank's (task, candidate) pairs, and each rank reports what it saw. Marked slow: about 50 s on 2 cores
(the launcher, two drivers importing torch, two pools of two actors, four harness workers)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalConfig, ResultStore, load_suite
from cudal1.policy import shared_pool
from cudal1.policy.evaluators import make_evaluator
from cudal1.policy.ray_evaluator import RayEvaluator
from cudal1.policy.shared_pool import PoolManifest, PoolShare, pool_share

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # see test_evaluators.py

FIXTURES = Path(__file__).parents[1] / "harness" / "fixtures"
TASK_NAME = "tiny_linear_relu"
# rank -> [(candidate fixture, expected status)]: each rank's own pairs, told apart by their statuses
RANK_PAIRS = {0: [("correct_rewrite", "ok"), ("wrong_values", "incorrect")],
              1: [("segfault", "runtime_error"), ("wrong_shape", "incorrect")]}
NUM_ACTORS = 1


def fast_config(cache_dir: str) -> EvalConfig:
    """tests/harness/conftest.py's fast_config (CPU, one thread, 0.25 s budget), fewer rounds."""
    return EvalConfig(device="cpu", time_budget_s=0.25, min_rounds=5, max_rounds=20, attempts=1,
                      compile_timeout_s=120, run_timeout_s=60, cache_dir=cache_dir, cpu_threads=1)


# -- naming the pool: no Ray needed ------------------------------------------------------------------
def test_pool_share_reads_the_launcher_environment(tmp_path):
    env = {"WORLD_SIZE": "4", "RANK": "2", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
    store = str(tmp_path / "results.sqlite")
    s = pool_share(store_path=store, env=env)
    assert (s.world_size, s.rank, s.shared, s.owner) == (4, 2, True, False)
    assert s.key == f"store:{Path(store).resolve()}" and s.namespace.startswith("cudal1-pool-")
    # every rank of the run gets the same namespace; another run (store) another one
    assert pool_share(store_path=store, env={**env, "RANK": "0"}).namespace == s.namespace
    assert pool_share(store_path=str(tmp_path / "other.sqlite"), env=env).namespace != s.namespace
    assert s.generation == 0 and s.namespace.endswith("-0")
    # precedence: argument > $CUDAL1_RAY_POOL > store path > MASTER_ADDR:MASTER_PORT
    assert pool_share(store_path=store, env={**env, "CUDAL1_RAY_POOL": "run-a"}).key == "run-a"
    assert pool_share(pool_name="run-b", store_path=store, env={**env, "CUDAL1_RAY_POOL": "run-a"}).key == "run-b"
    assert pool_share(store_path=":memory:", env=env).key == "master:10.0.0.1:29500"
    # arguments override the environment; one process is not shared
    assert pool_share(world_size=1, env=env) == PoolShare()
    assert pool_share(env={}) == PoolShare() and not PoolShare().shared and PoolShare().owner
    assert pool_share(rank=0, store_path=store, env=env).owner


def test_each_rank_counts_its_pools_of_a_run(tmp_path):
    """The n-th evaluator of every rank joins the n-th pool: a process counts the pools it made or joined,
    per key and rank; an evaluator that failed to start does not count."""
    env = {"WORLD_SIZE": "2", "CUDAL1_RAY_POOL": f"count-{tmp_path.name}"}
    first0, first1 = pool_share(env={**env, "RANK": "0"}), pool_share(env={**env, "RANK": "1"})
    assert first0.generation == first1.generation == 0
    shared_pool.commit(first0)  # rank 0's first pool is up
    assert pool_share(env={**env, "RANK": "0"}).generation == 1
    assert pool_share(env={**env, "RANK": "1"}) == first1  # rank 1 has not joined it yet: still its first
    shared_pool.commit(first1)
    second1 = pool_share(env={**env, "RANK": "1"})
    assert second1.generation == 1 and second1.namespace != first1.namespace
    assert second1.namespace == pool_share(env={**env, "RANK": "0"}).namespace
    shared_pool.commit(PoolShare())  # not shared: nothing to count
    assert pool_share(env={**env, "RANK": "1"}).generation == 1


def test_pool_share_errors_say_what_to_do():
    with pytest.raises(ValueError, match="nothing names it.*CUDAL1_RAY_POOL"):
        pool_share(env={"WORLD_SIZE": "2", "RANK": "1"})
    with pytest.raises(ValueError, match="rank 2 of world size 2"):
        pool_share(env={"WORLD_SIZE": "2", "RANK": "2"}, pool_name="x")
    with pytest.raises(ValueError, match="RANK='one' is not an integer"):
        pool_share(env={"WORLD_SIZE": "2", "RANK": "one"}, pool_name="x")


def test_manifest_waits_for_every_other_rank_to_detach():
    m = PoolManifest([{"k": 0, "name": "eval-0", "info": {}}], "{}", world_size=3)
    assert m.waiting_for() == [1, 2]  # not attached yet: still waited for
    m.attach(1)
    m.detach(1)
    m.attach(2)
    assert m.waiting_for() == [2] and m.ranks() == {"attached": [1, 2], "detached": [1]}
    m.detach(2)
    assert m.waiting_for() == [] and m.pool()["members"][0]["name"] == shared_pool.actor_name(0)


def test_several_ranks_refuse_a_local_instance_each(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    import ray

    if ray.is_initialized():
        pytest.skip("Ray is initialised in this process: the check applies only to a Ray this evaluator starts")
    with pytest.raises(ValueError, match="Ray cluster they all join.*ray start --head"):
        RayEvaluator(fast_config(str(tmp_path)), address="local", world_size=2, rank=0, pool_name="x")
    assert not ray.is_initialized()


# -- two ranks under accelerate launch, one local Ray head -------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_head():
    """A local Ray head in this process: (gcs address, the ray module); shut down after unless it was up."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=NUM_ACTORS + 1, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address, ray
    if started:
        ray.shutdown()


def _available_cpu(ray) -> float:
    return float(ray.available_resources().get("CPU", 0.0))


@pytest.mark.slow
def test_two_ranks_share_one_pool(ray_head, tmp_path):
    address, ray = ray_head
    cpus = _available_cpu(ray)
    store_path, out = tmp_path / "results.sqlite", tmp_path / "out"
    out.mkdir()
    ResultStore(store_path).close()  # the run folder's store exists before the ranks start, as in a run
    cfg = fast_config(str(tmp_path / "cache"))
    launcher = Path(sys.executable).parent / "accelerate"
    if not launcher.exists():
        pytest.skip(f"no accelerate launcher next to {sys.executable}")
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0", "OMP_NUM_THREADS": "1"}
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", shared_pool.POOL_ENV, "RAY_ADDRESS"):
        env.pop(k, None)
    cmd = [str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
           __file__, address, str(store_path), json.dumps(cfg.to_dict()), str(out)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    wall = time.monotonic() - t0
    print(f"accelerate launch, 2 ranks: {wall:.1f} s")
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
    reports = {r: json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)}
    for r, reps in reports.items():
        for rep in reps:
            print(f"rank {r} pool {rep['generation']}: startup {rep['startup_s']}, evaluate {rep['evaluate_s']:.1f} s")
        assert [rep["status"] for rep in reps] == [status for _, status in RANK_PAIRS[r]], (r, reps)
    namespaces = [pool_share(store_path=str(store_path), world_size=2, rank=0).namespace]
    namespaces.append(namespaces[0][:-1] + "1")  # the run's second pool
    for g, (r0, r1) in enumerate(zip(reports[0], reports[1], strict=True)):
        # rank 0 made pool g, rank 1 used it: the same actors (pids), named in the pool's namespace, and no
        # other pool's actor alive (the first was gone before the second started)
        assert (r0["owner"], r1["owner"], r0["generation"], r1["generation"]) == (True, False, g, g)
        assert r0["namespace"] == r1["namespace"] == namespaces[g]
        assert len(r0["actor_pids"]) == NUM_ACTORS and r1["actor_pids"] == r0["actor_pids"]
        names = [shared_pool.actor_name(k) for k in range(NUM_ACTORS)] + [shared_pool.MANIFEST]
        assert r1["named_actors"] == sorted(f"{namespaces[g]}/{n}" for n in names)
        assert r1["available_cpu"] == cpus - NUM_ACTORS, f"pool {g}: rank 1 asked Ray for actors of its own"
    assert not set(reports[0][0]["actor_pids"]) & set(reports[0][1]["actor_pids"])  # a new pool, new actors
    # each rank's driver stored its own results in the run's store
    with ResultStore(store_path) as store:
        for r in (0, 1):
            assert sorted(res.status for res in store.results(run=f"rank{r}")) == sorted(s for _, s in RANK_PAIRS[r])
    # rank 0 killed the last pool once both ranks were done: no pool actor left, the CPUs free again
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] in namespaces]
        if not left and _available_cpu(ray) == cpus:
            break
        time.sleep(0.2)
    assert not left and _available_cpu(ray) == cpus, (left, ray.available_resources())


def _rank_main(address: str, store_path: str, config_json: str, out_dir: str) -> int:
    """One rank, as the training pipeline builds its evaluators: same config and store path on every rank,
    one evaluator after another (the pipeline makes one per stage), one pair each."""
    import ray

    rank = int(os.environ["RANK"])
    task = next(t for t in load_suite(f"dir:{FIXTURES / 'tasks'}") if t.name == TASK_NAME)
    cfg = EvalConfig.from_dict(json.loads(config_json))
    reports = []
    with ResultStore(store_path) as store:
        for name, _ in RANK_PAIRS[rank]:
            pair = (task, Candidate(source=(FIXTURES / "candidates" / f"{name}.py").read_text(), task=task.name,
                                    origin="test"))
            with make_evaluator(cfg, ray_address=address, store=store, num_actors=NUM_ACTORS, start_timeout_s=120,
                                attach_timeout_s=120, release_timeout_s=120,
                                init_kwargs={"log_to_driver": False}) as ev:
                t0 = time.monotonic()
                (res,) = ev.evaluate([pair], run=f"rank{rank}")
                reports.append({
                    "owner": ev.share.owner, "namespace": ev.share.namespace, "generation": ev.share.generation,
                    "startup_s": ev.startup_s, "evaluate_s": time.monotonic() - t0,
                    "actor_pids": sorted(info["pid"] for info in ev.actor_info.values()),
                    "status": res.status, "reason": res.reason,
                    "named_actors": sorted(f"{a['namespace']}/{a['name']}"
                                           for a in ray.util.list_named_actors(all_namespaces=True)
                                           if a["namespace"].startswith("cudal1-pool-")),
                    "available_cpu": float(ray.available_resources().get("CPU", 0.0)),
                })
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(reports))
    return 0


if __name__ == "__main__":
    sys.exit(_rank_main(*sys.argv[1:5]))
