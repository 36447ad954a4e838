"""One Ray evaluation pool for all training processes of a run (``accelerate launch``/``torchrun`` ranks).

The ranks of a run share one pool instead of each asking for one actor per GPU of the cluster (the second
rank would wait out the start timeout behind the first one's actors):

- **rank 0 owns the pool**: it creates the actors as *named* actors (``eval-0``, ``eval-1`` ...) in a Ray
  namespace derived from the run (:func:`pool_share`), waits until each has built its EvalPool, then
  creates a small ``manifest`` actor (no CPU) holding their names, host/pid and the evaluation config.
  The manifest appearing is the signal that the pool is ready.
- **other ranks attach**: they wait (``attach_timeout_s``) for the manifest, check that their EvalConfig
  is the pool's, look the actors up by name and submit their own pairs to them. They never create actors.
- **results**: every rank's driver stores the results it received in its own store handle (the same
  SQLite file for the ranks of one run); actors never touch a store.
- **shutdown**: each rank's ``close()`` tells the manifest it is done; rank 0's ``close()`` waits (up to
  ``release_timeout_s``) until every other rank has, then kills the actors. Named actors that are not
  detached die with rank 0's driver, so a crashed run leaves no pool behind.
- **one pool after another**: a run may create and close several evaluators in turn (the pipeline does, per
  stage). Each rank numbers the pools it has made for a key (its *generation*: 0, 1, ...), and the number
  is part of the namespace, so every rank's n-th evaluator joins rank 0's n-th pool, never a pool being
  closed. The ranks must therefore create their evaluators in the same order, as the ranks of one training
  script do; a rank out of step finds a pool with another config (an error) or waits for one.

Which pool a run uses (the *key*, hashed into the Ray namespace), first found of: the ``pool_name``
argument, ``$CUDAL1_RAY_POOL``, the results store's absolute path (the run folder's results.sqlite, the same
for every rank of a run on one machine or a shared file system), ``$MASTER_ADDR:$MASTER_PORT`` (set by
accelerate/torchrun, the same on every rank of one launch).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POOL_ENV = "CUDAL1_RAY_POOL"
MANIFEST = "manifest"
_WAIT_STEP_S = 0.5
_generations: dict[tuple[str, int], int] = {}  # (key, rank) -> pools this process has made/joined as that rank
_generations_lock = threading.Lock()

__all__ = ["MANIFEST", "POOL_ENV", "PoolManifest", "PoolShare", "actor_name", "attach", "commit", "name_taken",
           "named_options", "pool_share", "publish", "release"]


@dataclass(frozen=True)
class PoolShare:
    """Where this process stands in a shared pool.

    Attributes:
        world_size: training processes of the run (1: not shared, the evaluator's actors are its own).
        rank: this process's rank, 0 <= rank < world_size; rank 0 creates the pool.
        key: what names the pool ("" when not shared), e.g. ``store:/runs/x/results.sqlite``.
        generation: the pool's number among those of ``key`` (see the module docstring).
    ``namespace`` (a property): the Ray namespace of the pool's named actors ("" when not shared).
    """

    world_size: int = 1
    rank: int = 0
    key: str = ""
    generation: int = 0

    @property
    def namespace(self) -> str:
        """``cudal1-pool-<hash of key>-<generation>``."""
        if not self.shared:
            return ""
        return f"cudal1-pool-{hashlib.sha256(self.key.encode()).hexdigest()[:16]}-{self.generation}"

    @property
    def shared(self) -> bool:
        return self.world_size > 1

    @property
    def owner(self) -> bool:
        """Whether this process creates (and at the end kills) the actors."""
        return self.rank == 0


def actor_name(k: int) -> str:
    """Name of the pool's ``k``-th evaluation actor in its namespace."""
    return f"eval-{k}"


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an integer; unset it or fix the launcher"
                         ) from None


def pool_share(*, world_size: int | None = None, rank: int | None = None, pool_name: str | None = None,
               store_path: str | None = None, env: Mapping[str, str] | None = None) -> PoolShare:
    """This process's place in the run's shared pool, for the next evaluator it creates (the generation
    after the last one :func:`commit` counted).

    Args:
        world_size, rank: default ``$WORLD_SIZE`` (1) and ``$RANK`` (0), as accelerate/torchrun set them.
        pool_name: the pool's key; default ``$CUDAL1_RAY_POOL``, then ``store_path`` (made absolute), then
            ``$MASTER_ADDR:$MASTER_PORT``.
        store_path: the results store's file (``":memory:"`` does not name a pool).
        env: the environment to read (default ``os.environ``).
    Raises:
        ValueError: a rank outside ``[0, world_size)``, a non-integer variable, or several processes and
            nothing to name their pool by.
    """
    env = os.environ if env is None else env
    n = _env_int(env, "WORLD_SIZE", 1) if world_size is None else world_size
    if n == 1 and rank is None:  # a process alone (world_size=1 also opts a rank out of sharing)
        return PoolShare()
    r = _env_int(env, "RANK", 0) if rank is None else rank
    if n < 1 or not 0 <= r < n:
        raise ValueError(f"rank {r} of world size {n} is not a process of the run (need 0 <= rank < world_size); "
                         "check the RANK and WORLD_SIZE the launcher set, or the rank/world_size arguments")
    if n == 1:
        return PoolShare(world_size=1, rank=0)
    key = pool_name or env.get(POOL_ENV, "").strip()
    if not key and store_path and store_path != ":memory:":
        key = f"store:{Path(store_path).resolve()}"
    if not key and env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        key = f"master:{env['MASTER_ADDR']}:{env['MASTER_PORT']}"
    if not key:
        raise ValueError(f"{n} processes (WORLD_SIZE) share one Ray evaluation pool, but nothing names it: give "
                         f"the evaluator a results store on disk, pass pool_name=, or set {POOL_ENV} to the same "
                         "value on every rank")
    with _generations_lock:
        generation = _generations.get((key, r), 0)
    return PoolShare(world_size=n, rank=r, key=key, generation=generation)


def commit(share: PoolShare) -> None:
    """Count ``share``'s pool as made (rank 0) or joined (other ranks): this process's next pool of that key
    and rank is the next generation. Called once the evaluator is up; a failed start does not count."""
    if share.shared:
        with _generations_lock:
            _generations[(share.key, share.rank)] = max(_generations.get((share.key, share.rank), 0),
                                                        share.generation + 1)


class PoolManifest:
    """Body of the manifest actor: what rank 0 published, and which ranks have attached and detached."""

    def __init__(self, members: list[dict[str, Any]], config_json: str, world_size: int) -> None:
        self._members, self._config_json, self._world_size = members, config_json, world_size
        self._attached: set[int] = set()
        self._detached: set[int] = set()

    def pool(self) -> dict[str, Any]:
        """``{"members": [{"k", "name", "info"}, ...], "config": json, "world_size": n}``."""
        return {"members": self._members, "config": self._config_json, "world_size": self._world_size}

    def attach(self, rank: int) -> None:
        self._attached.add(rank)
        self._detached.discard(rank)

    def detach(self, rank: int) -> None:
        self._detached.add(rank)

    def waiting_for(self) -> list[int]:
        """Ranks other than 0 that have not detached yet (attached or not)."""
        return sorted(set(range(1, self._world_size)) - self._detached)

    def ranks(self) -> dict[str, list[int]]:
        return {"attached": sorted(self._attached), "detached": sorted(self._detached)}


def publish(ray: Any, share: PoolShare, members: list[dict[str, Any]], config_json: str) -> Any:
    """Rank 0: create the manifest actor (the pool is ready); returns its handle.

    Raises:
        RuntimeError: a manifest of that name exists already (another live run uses the same pool key).
    """
    cls = ray.remote(PoolManifest).options(name=MANIFEST, namespace=share.namespace, num_cpus=0,
                                           max_restarts=0)
    try:
        handle = cls.remote(members, config_json, share.world_size)
        ray.get(handle.ranks.remote(), timeout=60)
    except ValueError as e:
        raise name_taken(share, str(e)) from e
    return handle


def name_taken(share: PoolShare, detail: str) -> RuntimeError:
    """The error for a pool name already in use in the namespace (``detail``: Ray's message)."""
    return RuntimeError(f"a Ray evaluation pool for {share.key!r} (namespace {share.namespace}) is already running: another "
            f"run with the same pool key is alive ({detail}). Pass another pool_name or set {POOL_ENV} per run")


def named_options(share: PoolShare, k: int) -> dict[str, Any]:
    """Ray options that name rank 0's ``k``-th actor in the pool's namespace (none when not shared)."""
    return {"name": actor_name(k), "namespace": share.namespace} if share.shared else {}


def attach(ray: Any, share: PoolShare, timeout_s: float) -> tuple[Any, dict[str, Any], dict[int, Any]]:
    """Rank > 0: wait up to ``timeout_s`` for rank 0's manifest, then look the pool's actors up.

    Returns (manifest handle, the published pool, {k: actor handle} of the members still alive).
    Raises:
        RuntimeError: no manifest within ``timeout_s``, or none of its actors alive.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            manifest = ray.get_actor(MANIFEST, namespace=share.namespace)
            pool = ray.get(manifest.pool.remote(), timeout=max(1.0, deadline - time.monotonic()))
            break
        except (ValueError, ray.exceptions.RayActorError):  # not created yet / rank 0 closing it
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"rank {share.rank}: rank 0's Ray evaluation pool (key {share.key!r}, namespace "
                    f"{share.namespace}) did not appear within {timeout_s:g} s. Check rank 0's log (its actors may "
                    "have failed to start); check that every rank connects to the same Ray cluster and names the "
                    f"pool the same way (same store path or {POOL_ENV}); or raise attach_timeout_s") from None
            time.sleep(_WAIT_STEP_S)
        except ray.exceptions.GetTimeoutError:
            raise RuntimeError(f"rank {share.rank}: the pool's manifest actor did not answer within {timeout_s:g} s"
                               ) from None
    actors: dict[int, Any] = {}
    for m in pool["members"]:
        try:
            actors[int(m["k"])] = ray.get_actor(m["name"], namespace=share.namespace)
        except ValueError:  # died since rank 0 published it: its name is free again
            continue
    if not actors:
        raise RuntimeError(f"rank {share.rank}: every actor of rank 0's Ray evaluation pool ({share.namespace}) is "
                           "dead; check the actors' logs (`ray logs`) and restart the run")
    manifest.attach.remote(share.rank)
    return manifest, pool, actors


def release(ray: Any, manifest: Any, timeout_s: float) -> list[int]:
    """Rank 0: wait up to ``timeout_s`` until every other rank has detached; returns the ranks that did not."""
    deadline = time.monotonic() + timeout_s
    waiting: list[int] = []
    while True:
        try:
            waiting = ray.get(manifest.waiting_for.remote(), timeout=max(1.0, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - manifest or Ray gone: nobody left to wait for
            return []
        if not waiting or time.monotonic() >= deadline:
            return waiting
        time.sleep(_WAIT_STEP_S)
