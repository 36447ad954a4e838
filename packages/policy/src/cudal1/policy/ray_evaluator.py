"""The Ray evaluator: reward evaluation on Ray actors, one EvalPool each (:mod:`cudal1.policy.evaluators`
holds the protocol, the local evaluator and ``make_evaluator``).

:class:`RayEvaluator` holds Ray actors, each with its own EvalPool: one actor per GPU of the cluster on a
CUDA config (``num_gpus=1``; Ray sets ``CUDA_VISIBLE_DEVICES`` inside the actor, so its pool times on that one
GPU), ``num_actors`` CPU actors otherwise. The driver hands out pairs as actors free up, in chunks no larger
than an actor's fair share of what is left: up to 4 on a GPU (its pool then starts the next workers while one
pair is timed), ``cpu_lanes`` on the CPU (one per lane). An actor streams each result back as its worker
finishes (long polls, which also work through Ray Client), and the driver stores it at once: the store is a
local SQLite file that actors never touch. Tasks, candidates and results cross the process boundary as JSON
strings (their ``to_json``/``from_json``).

Several training processes (``accelerate launch``/``torchrun``: ``WORLD_SIZE`` > 1, ``RANK``) share one
pool: rank 0 creates the actors as named actors in a Ray namespace derived from the run (its store path,
or ``pool_name``/``$CUDAL1_RAY_POOL``) and publishes them; every other rank waits for them, looks them up
by name and submits its own pairs; no rank but 0 creates an actor. The n-th evaluator of each rank joins
the n-th pool (ranks create their evaluators in the same order). An actor queues the chunks of all
ranks and runs them one at a time (a GPU never times two candidates at once); each rank's driver stores
the results it received. Rank 0's ``close()`` waits for the other ranks' before it kills the actors. The
ranks must join one Ray cluster (an address such as ``"auto"``, not a local instance each); details in
:mod:`cudal1.policy.shared_pool`. ``world_size=1`` gives a process actors of its own.

Failures: pairs of an actor that dies go back to the queue once and run on the other actors; a pair that
loses a second actor, or finds none left, ends the call with :class:`EvaluatorError`, after every other
pair has finished; results measured before that are already in the store and are not re-run.

A local Ray instance (no address) runs workers on this machine's interpreter, so Ray's ``uv run`` hook,
which builds a copy of the project's environment in every worker, is switched off for it
(``RAY_ENABLE_UV_RUN_RUNTIME_ENV=0`` when Ray is not imported yet). On a cluster the hook is what ships
the project to the workers; otherwise install cudal1 on every node.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cudal1.harness import Candidate, EvalConfig, EvalPool, EvalResult, ResultStore, Task

from . import shared_pool
from .evaluator_protocol import EvaluatorError, Pair, _Closable

_POLL_S = 5.0  # how long one long poll of an actor waits for results (s)
_GPU_CHUNK = 4  # pairs handed to a GPU actor at once: its pool starts 3 workers ahead (EvalPool's spares)


def actor_options(config: EvalConfig, drivers: int = 1) -> dict[str, Any]:
    """Ray resources and restart policy of one evaluation actor: one GPU on a CUDA config, one CPU always;
    never restarted by Ray (the driver re-queues a dead actor's pairs itself); threads enough for
    ``drivers`` processes (the ranks sharing it) to each have a long poll and a call in flight."""
    opts: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "max_task_retries": 0,
                            "max_concurrency": 2 * max(1, drivers) + 2}
    if config.is_cuda:
        opts["num_gpus"] = 1
    return opts


class _PoolActor:
    """Body of one Ray actor: an EvalPool fed chunks of pairs as JSON, results polled back as JSON.

    Several drivers (the ranks of a run) may use one actor: each chunk gets a ticket and its own result
    queue, and one thread runs the chunks in arrival order, never two at once on one device. The actor is
    threaded (``max_concurrency``), so one driver's long poll does not hold up another's calls."""

    def __init__(self, config_json: str, cpu_lanes: int, lanes_per_gpu: int = 1,
                 warm_spares: str = "context", fork_workers: bool | None = None) -> None:
        self._pool = EvalPool(EvalConfig.from_dict(json.loads(config_json)), cpu_lanes=cpu_lanes,
                              lanes_per_gpu=lanes_per_gpu, keep_warm=True, warm_spares=warm_spares,
                              fork_workers=fork_workers)
        self._lock = threading.Lock()
        self._work: queue.Queue[tuple[int, list[Pair]]] = queue.Queue()
        self._out: dict[int, queue.Queue[list[Any]]] = {}
        self._next = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def info(self) -> dict[str, Any]:
        return {"host": socket.gethostname(), "pid": os.getpid(), "lanes": len(self._pool.lanes),
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "")}

    def start(self, chunk: list[list[str]]) -> int:
        """Queue ``[[task_json, candidate_json], ...]`` for evaluation; returns the chunk's ticket."""
        pairs = [(Task.from_json(t), Candidate.from_json(c)) for t, c in chunk]
        with self._lock:
            ticket, self._next = self._next, self._next + 1
            self._out[ticket] = queue.Queue()
        self._work.put((ticket, pairs))
        return ticket

    def _serve(self) -> None:
        while True:
            ticket, pairs = self._work.get()
            with self._lock:
                q = self._out[ticket]
            try:
                self._pool.map(pairs, on_result=lambda i, r, q=q: q.put(["result", i, r.to_json()]))
                q.put(["done", -1, ""])
            except BaseException as e:  # noqa: BLE001 - reported to the driver
                q.put(["error", -1, f"{type(e).__name__}: {e}"])

    def results(self, ticket: int, wait_s: float) -> list[list[Any]]:
        """``[kind, index, text]`` items of chunk ``ticket`` finished since the last call; waits up to
        ``wait_s`` for the first. The ``done`` or ``error`` item ends the chunk."""
        with self._lock:
            q = self._out.get(ticket)
        if q is None:
            return [["error", -1, f"this actor has no chunk {ticket} (already finished)"]]
        items: list[list[Any]] = []
        try:
            items.append(q.get(timeout=wait_s))
            while True:
                items.append(q.get_nowait())
        except queue.Empty:
            pass
        if any(kind != "result" for kind, _, _ in items):
            with self._lock:
                self._out.pop(ticket, None)
        return items


class _ActorLost(Exception):
    """The actor behind a lane is gone: retire the lane."""


class _ChunkFailed(Exception):
    """A chunk ended without all its results, the actor still alive."""


Lane = Callable[[list[int], Callable[[int, EvalResult], None]], None]


def _dispatch(lanes: Mapping[int, Lane], todo: Sequence[int], on_result: Callable[[int, EvalResult], None],
              max_chunk: int = 1) -> tuple[dict[int, str], list[int]]:
    """Run pair indices ``todo`` over ``lanes`` (lane id -> ``lane(chunk, on_result)``) as lanes free up,
    in chunks of at most ``max_chunk`` and at most a live lane's fair share of what is left.

    A lane raising ``_ActorLost`` is retired; the unfinished pairs of a failed chunk are re-queued once.
    Returns ({pair index: why it got no result}, ids of the lanes lost)."""
    pending, tries, cv = collections.deque(todo), collections.Counter[int](), threading.Condition()
    failed: dict[int, str] = {}
    lost: list[int] = []
    why_lost: list[str] = []
    busy = [0]

    def drive(k: int, lane: Lane) -> None:
        while True:
            with cv:
                while not pending and busy[0]:
                    cv.wait()
                if not pending:
                    return
                live = max(1, len(lanes) - len(lost))
                n = max(1, min(max_chunk, -(-len(pending) // live)))
                chunk = [pending.popleft() for _ in range(n)]
                busy[0] += 1
            got: set[int] = set()
            why, dead = "the actor ended its chunk without this pair's result", False

            def each(i: int, res: EvalResult, got: set[int] = got) -> None:
                on_result(i, res)
                got.add(i)

            try:
                lane(chunk, each)
            except _ActorLost as e:
                why, dead = str(e), True
            except _ChunkFailed as e:
                why = str(e)
            with cv:
                busy[0] -= 1
                for i in chunk:
                    if i not in got:
                        tries[i] += 1
                        if tries[i] >= 2:
                            failed[i] = f"failed twice; last: {why}"
                        else:
                            pending.append(i)
                if dead:
                    lost.append(k)
                    why_lost.append(why)
                cv.notify_all()
            if dead:
                return

    threads = [threading.Thread(target=drive, args=kv, daemon=True) for kv in lanes.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in pending:
        failed[i] = f"no live Ray actor was left to run it (last lost: {why_lost[-1] if why_lost else 'none'})"
    return failed, lost


class RayEvaluator(_Closable):
    """Evaluates on Ray actors, one EvalPool each, shared by the ranks of a run (see the module docstring).

    Args:
        config: evaluation settings (``cuda:N`` counts as ``cuda``: each actor uses the GPU Ray gives it).
        address: ``"auto"``, ``"ray://host:10001"``, or None to start a local instance (unless Ray is
            already initialised in this process: then that one is used, and left running by ``close()``).
        store: results store on this machine; the driver reads finished pairs back and adds new results.
        num_actors: actors to start (default: one per cluster GPU on a CUDA config, 1 on a CPU config);
            only rank 0 starts actors, the others use rank 0's.
        cpu_lanes: CPU lanes per actor's pool (CPU config); lanes_per_gpu: lanes on the actor's GPU (CUDA config:
            they overlap all but timing, :mod:`cudal1.harness.gate`); warm_spares: what the spare workers of an
            actor's GPU lanes do while they wait; fork_workers: the actors' workers forked from warm templates (None: the
            pool's default for the device) (both :class:`~cudal1.harness.EvalPool`'s settings).
        init_kwargs: extra ``ray.init`` arguments when this object initialises Ray (e.g. ``num_cpus``).
        start_timeout_s: seconds to wait for every actor to be placed and to build its pool.
        world_size, rank: the processes of the run and this one's place (default ``$WORLD_SIZE``, ``$RANK``
            as accelerate/torchrun set them); with ``world_size > 1`` all ranks share rank 0's actors
            (:mod:`cudal1.policy.shared_pool`). ``world_size=1`` gives this process actors of its own.
        pool_name: what names the shared pool (default ``$CUDAL1_RAY_POOL``, else the store's path, else
            ``$MASTER_ADDR:$MASTER_PORT``); the same on every rank of a run, different between runs.
        attach_timeout_s: how long a rank other than 0 waits for rank 0's pool to be ready.
        release_timeout_s: how long rank 0's ``close()`` waits for the other ranks to close theirs before
            it kills the actors.
    Attributes:
        startup_s: ``{"ray_init": s, "actors": s}``; actor_info: host, pid, visible GPU of each actor;
        share: this process's :class:`~cudal1.policy.shared_pool.PoolShare` (rank, namespace, owner).
    """

    def __init__(self, config: EvalConfig, *, address: str | None = None, store: ResultStore | None = None,
                 num_actors: int | None = None, cpu_lanes: int = 1, lanes_per_gpu: int = 1,
                 warm_spares: str = "context", fork_workers: bool | None = None, init_kwargs: Mapping[str, Any] | None = None,
                 start_timeout_s: float = 300.0, world_size: int | None = None, rank: int | None = None,
                 pool_name: str | None = None, attach_timeout_s: float = 600.0,
                 release_timeout_s: float = 300.0) -> None:
        self.config, self.store, self.cpu_lanes = config, store, max(1, cpu_lanes)
        self.lanes_per_gpu, self.warm_spares = max(1, lanes_per_gpu), warm_spares
        self.fork_workers = fork_workers
        self.share = shared_pool.pool_share(world_size=world_size, rank=rank, pool_name=pool_name,
                                            store_path=store.path if store is not None else None)
        self.release_timeout_s = release_timeout_s
        self._ray: Any = None
        self._actors: dict[int, Any] = {}
        self._manifest: Any = None
        local = address in (None, "local")
        if local and "ray" not in sys.modules:  # see the module docstring
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        try:
            import ray
        except ImportError as e:
            raise ImportError("RayEvaluator needs Ray (`pip install 'ray>=2.40'`, or `uv sync` with the dev group);"
                              " or give no Ray address to evaluate on this machine") from e
        self._ray, t0 = ray, time.monotonic()
        self._owns_ray = not ray.is_initialized()
        if self.share.shared and self._owns_ray and (address == "local" or (address is None
                                                                           and not os.environ.get("RAY_ADDRESS"))):
            raise ValueError(f"{self.share.world_size} processes (WORLD_SIZE) share one Ray evaluation pool, which "
                             "needs a Ray cluster they all join, not a local instance per process: start one "
                             "(`ray start --head`) and give its address (recipe `eval.ray_address: auto`), or pass "
                             "world_size=1 to give each process actors of its own")
        if self._owns_ray:
            ray.init(address=address, **{**({"include_dashboard": False} if local else {}), **(init_kwargs or {})})
        self.startup_s = {"ray_init": time.monotonic() - t0}
        t1 = time.monotonic()
        try:
            if self.share.owner:
                infos = self._start_actors(num_actors, start_timeout_s)
            else:
                infos = self._attach(attach_timeout_s)
        except BaseException:
            self.close()
            raise
        self.startup_s["actors"] = time.monotonic() - t1
        self.actor_info: dict[int, dict[str, Any]] = infos
        shared_pool.commit(self.share)

    def _actor_config(self) -> EvalConfig:
        return self.config.replace(device="cuda") if self.config.is_cuda else self.config

    def _start_actors(self, num_actors: int | None, start_timeout_s: float) -> dict[int, dict[str, Any]]:
        """Rank 0 (or a process alone): create the actors, wait until each has its pool; publish them to the
        other ranks when shared."""
        ray, config = self._ray, self.config
        opts = actor_options(config, drivers=self.share.world_size)
        try:
            gpus = int(ray.cluster_resources().get("GPU", 0))
            if config.is_cuda and (gpus == 0 or (num_actors or 0) > gpus):
                raise RuntimeError(f"config asks for device 'cuda' and {num_actors or 'one actor per GPU'} actors, "
                                   f"but the Ray cluster has {gpus} GPU(s); start Ray nodes with GPUs "
                                   "(`ray start --num-gpus N`), lower num_actors, or use device 'cpu'")
            n = num_actors if num_actors is not None else (gpus if config.is_cuda else 1)
            config_json = json.dumps(self._actor_config().to_dict())
            cls = ray.remote(_PoolActor)
            for k in range(max(1, n)):
                try:
                    self._actors[k] = cls.options(**opts, **shared_pool.named_options(self.share, k)).remote(
                        config_json, self.cpu_lanes, self.lanes_per_gpu, self.warm_spares, self.fork_workers)
                except ValueError as e:  # the name is taken
                    raise shared_pool.name_taken(self.share, str(e)) from e
            infos = ray.get([a.info.remote() for a in self._actors.values()], timeout=start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise RuntimeError(f"{len(self._actors)} Ray evaluation actor(s) did not start within {start_timeout_s:g}"
                               f" s; each asks for {opts} and the cluster has {ray.cluster_resources()}: free "
                               "resources, lower num_actors or raise start_timeout_s") from None
        except ray.exceptions.RayError as e:
            raise RuntimeError(f"a Ray evaluation actor failed to start: {e}; check that cudal1 is installed "
                               "on every node and that the config's device exists there") from e
        info = dict(zip(self._actors, infos, strict=True))
        if self.share.shared:
            members = [{"k": k, "name": shared_pool.actor_name(k), "info": info[k]} for k in self._actors]
            self._manifest = shared_pool.publish(ray, self.share, members, config_json)
        return info

    def _attach(self, timeout_s: float) -> dict[int, dict[str, Any]]:
        """A rank other than 0: use rank 0's published actors (after checking that its config is ours)."""
        mine = self._actor_config().to_dict()
        self._manifest, pool, self._actors = shared_pool.attach(self._ray, self.share, timeout_s)
        theirs = json.loads(pool["config"])
        if theirs != mine:
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            shown = ", ".join(f"{k}: {theirs.get(k)!r} (rank 0) vs {mine.get(k)!r}" for k in diff)
            raise ValueError(f"rank {self.share.rank}'s EvalConfig differs from that of rank 0's Ray pool ({shown}); "
                             "give every rank of the run the same eval settings")
        info = {int(m["k"]): m["info"] for m in pool["members"] if int(m["k"]) in self._actors}
        self.cpu_lanes = min(i["lanes"] for i in info.values())  # chunks as large as the pool's lanes
        return info

    @property
    def actors(self) -> list[Any]:
        """Handles of the live actors."""
        return list(self._actors.values())

    def _lane(self, k: int, pairs: Sequence[Pair]) -> Lane:
        ray, actor, info = self._ray, self._actors[k], self.actor_info[k]

        def lane(chunk: list[int], on_result: Callable[[int, EvalResult], None]) -> None:
            try:
                ticket = ray.get(actor.start.remote([[pairs[i][0].to_json(), pairs[i][1].to_json()] for i in chunk]))
                while True:
                    for kind, j, text in ray.get(actor.results.remote(ticket, _POLL_S)):
                        if kind == "result":
                            on_result(chunk[j], EvalResult.from_json(text))
                        elif kind == "error":
                            raise _ChunkFailed(f"the harness raised on Ray actor {k}: {text}")
                        else:
                            return
            except ray.exceptions.RayActorError as e:
                ray.kill(actor, no_restart=True)
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise _ActorLost(f"Ray actor {k} ({info['host']} pid {info['pid']}) died: {first}") from e
            except ray.exceptions.RayError as e:
                raise _ChunkFailed(f"Ray call to actor {k} failed: {e}") from e

        return lane

    def evaluate(self, pairs: Sequence[Pair], *, run: str = "", fresh: bool = False) -> list[EvalResult]:
        self._check_open()
        pairs = list(pairs)
        results: list[EvalResult | None] = [None] * len(pairs)
        todo = []
        for i, (task, cand) in enumerate(pairs):
            prev = self.store.lookup(task, cand, self.config) if self.store is not None and not fresh else None
            if prev is None:
                todo.append(i)
            results[i] = prev

        def store_one(i: int, res: EvalResult) -> None:
            if self.store is not None:
                self.store.add(res, pairs[i][0], pairs[i][1], self.config, run=run)
            results[i] = res

        chunk = _GPU_CHUNK if self.config.is_cuda else self.cpu_lanes
        failed, lost = _dispatch({k: self._lane(k, pairs) for k in self._actors}, todo, store_one, chunk)
        for k in lost:
            self._actors.pop(k, None)
        if not failed:
            return [r for r in results if r is not None]
        shown = "; ".join(f"#{i} {pairs[i][0].name}: {why}" for i, why in sorted(failed.items())[:3])
        kept = ("are in the store; call evaluate again to run only the missing ones" if self.store is not None
                else "are in this error's .results (pass store= to keep them across calls)")
        raise EvaluatorError(f"{len(failed)} of {len(pairs)} pairs got no result ({shown}). {len(self._actors)} Ray "
                             f"actor(s) remain; the {len(pairs) - len(failed)} results measured {kept}. Check the "
                             "actors' logs (`ray logs`) for out-of-memory kills or crashes; with no actor left, "
                             "create a new RayEvaluator.", results)

    def close(self, wait_s: float = 30.0) -> None:
        """Stop using the actors. A rank other than 0 only tells rank 0 it is done. Rank 0 (or a process
        alone) first waits, up to ``release_timeout_s``, until the other ranks have closed theirs, then kills
        the actors (their pools with them) and waits, up to ``wait_s`` seconds, until Ray reports them dead
        (``ray.kill`` itself returns before the actor is gone). Ray is shut down if this object initialised
        it."""
        ray = self._ray
        if ray is None or self._closed:
            self._actors = {}
            super().close()
            return
        if self.share.shared and not self.share.owner:
            if self._manifest is not None and ray.is_initialized():
                with contextlib.suppress(Exception):  # rank 0 gone already: nothing to tell
                    ray.get(self._manifest.detach.remote(self.share.rank), timeout=wait_s)
            actors = []
        else:
            if self._manifest is not None:
                left = shared_pool.release(ray, self._manifest, self.release_timeout_s)
                if left:
                    warnings.warn(f"rank(s) {left} did not close their RayEvaluator within {self.release_timeout_s:g}"
                                  " s; killing the shared Ray evaluation pool anyway", RuntimeWarning, stacklevel=2)
                with contextlib.suppress(Exception):
                    ray.kill(self._manifest, no_restart=True)
            actors = list(self._actors.values())
        for actor in actors:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(actor, no_restart=True)
        deadline = time.monotonic() + wait_s
        for actor in actors if ray.is_initialized() else []:
            while time.monotonic() < deadline:
                try:
                    ray.get(actor.info.remote(), timeout=max(0.1, min(2.0, deadline - time.monotonic())))
                except ray.exceptions.RayActorError:
                    break  # dead
                except ray.exceptions.GetTimeoutError:
                    continue  # busy or still shutting down: ask again
                except Exception:  # noqa: BLE001 - Ray itself failing: nothing left to wait for
                    break
                time.sleep(0.1)
        self._actors, self._manifest = {}, None
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        super().close()


__all__ = ["RayEvaluator", "actor_options"]
