"""Reward evaluation at scale: (task, candidate) pairs -> EvalResults, on this machine or on a Ray cluster.

    with make_evaluator(config, ray_address=recipe.eval.ray_address, store=store) as ev:
        results = ev.evaluate(pairs, run="grpo-step-12")      # input order; each result stored as it exists

Two evaluators share one protocol (:class:`Evaluator`):

- :class:`LocalEvaluator` holds one long-lived :class:`~cudal1.harness.EvalPool` (one lane per GPU, or
  ``cpu_lanes`` on the CPU). It is kept across calls: a new pool per call would pay the CUDA probe again.
- :class:`cudal1.policy.ray_evaluator.RayEvaluator` holds Ray actors, each with its own EvalPool, shared by
  every rank of a multi-process run (see that module).

:func:`make_evaluator` picks one (Ray only when an address is given; the Ray module is imported only then).
:class:`SharedMeasurements` wraps either so that runs share what they measured (a recipe's ``eval.shared_store``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cudal1.harness import EvalConfig, EvalPool, EvalResult, ResultStore
from cudal1.harness.techniques import library_digest

from .evaluator_protocol import Evaluator, EvaluatorError, Pair, _Closable


class LocalEvaluator(_Closable):
    """Evaluates on this machine through one EvalPool kept for the evaluator's life.

    Args:
        config: evaluation settings.
        store: results store; pairs already in it are read back, new results are added as they exist.
        gpus: GPU indices for a CUDA config (default: all visible); cpu_lanes: CPU lanes otherwise.
        lanes_per_gpu: lanes on each GPU; warm_spares: what a GPU lane's spare workers do while they wait;
            fork_workers: workers forked from warm templates (None: the pool's default for the device) (all three
            :class:`~cudal1.harness.EvalPool`'s settings).
    """

    def __init__(self, config: EvalConfig, *, store: ResultStore | None = None,
                 gpus: Sequence[int] | None = None, cpu_lanes: int = 1, lanes_per_gpu: int = 1,
                 warm_spares: str = "context", fork_workers: bool | None = None) -> None:
        self.config, self.store = config, store
        # keep_warm: the next call's first pair need not wait for a cold worker (seconds on a GPU)
        self.pool = EvalPool(config, gpus=gpus, cpu_lanes=cpu_lanes, lanes_per_gpu=lanes_per_gpu, keep_warm=True,
                             warm_spares=warm_spares, fork_workers=fork_workers)

    def evaluate(self, pairs: Sequence[Pair], *, run: str = "", fresh: bool = False) -> list[EvalResult]:
        self._check_open()
        if fresh:  # no read-back from the store: measured again, then stored
            results = self.pool.map(list(pairs))
            if self.store is not None:
                for (task, cand), res in zip(pairs, results, strict=True):
                    self.store.add(res, task, cand, self.config, run=run)
            return results
        return self.pool.map(list(pairs), store=self.store, run=run)

    def close(self) -> None:
        """Stop the pool's waiting workers; the evaluator refuses further calls."""
        self.pool.close()
        super().close()


class SharedMeasurements(_Closable):
    """An evaluator that takes measurements other runs made: a pair its run's store lacks is read from ``shared``
    (a results store several runs write) when ``shared`` holds that exact pair (task, candidate source) measured
    under the same settings (``config``'s key) with the kernel-library code the candidate imports now, and is
    added to the run's store as if measured here; every other pair goes to ``inner``, and what it measures is added
    to ``shared``. ``fresh`` re-measurements always go to ``inner`` (and become ``shared``'s latest). A result
    flagged ``unsandboxed`` is never taken from ``shared``.

    The learning experiment's arms of one seed share one store: both GRPO arms draw their first round from the same
    checkpoint with the same seed, and later rounds and the held-out evaluations repeat much of the same code
    (benchmarks/results/2026-12-06-learning-seed0-h100.md), which each arm's own store measured again. Each arm's
    store still holds every result it used (its contrastive exemplars come from it alone)."""

    def __init__(self, inner: Evaluator, shared: ResultStore, config: EvalConfig,
                 store: ResultStore | None = None) -> None:
        self.inner, self.shared, self.config, self.store = inner, shared, config, store
        self.taken = 0  #: pairs answered from ``shared`` so far

    def _from_shared(self, task: Any, cand: Any) -> EvalResult | None:
        hit = self.shared.lookup(task, cand, self.config)
        if hit is None or "unsandboxed" in hit.flags:
            return None
        if hit.build.get("library_digest", "") != library_digest(cand.source):
            return None  # measured with other library code than the candidate imports now
        return hit

    def evaluate(self, pairs: Sequence[Pair], *, run: str = "", fresh: bool = False) -> list[EvalResult]:
        self._check_open()
        if fresh:
            results = self.inner.evaluate(pairs, run=run, fresh=True)
            for (task, cand), res in zip(pairs, results, strict=True):
                self.shared.add(res, task, cand, self.config, run=run)
            return results
        out: list[EvalResult | None] = [None] * len(pairs)
        todo: list[int] = []
        for i, (task, cand) in enumerate(pairs):
            own = self.store.lookup(task, cand, self.config) if self.store is not None else None
            hit = None if own is not None else self._from_shared(task, cand)
            if hit is None:
                todo.append(i)  # measured by ``inner`` (or read back from the run's own store there)
                continue
            out[i] = hit
            self.taken += 1
            if self.store is not None:
                self.store.add(hit, task, cand, self.config, run=run)
        if todo:
            got = self.inner.evaluate([pairs[i] for i in todo], run=run)
            for i, res in zip(todo, got, strict=True):
                out[i] = res
                task, cand = pairs[i]
                if self.shared.lookup(task, cand, self.config) is None:
                    self.shared.add(res, task, cand, self.config, run=run)
        return [r for r in out if r is not None]

    def close(self) -> None:
        """Close ``inner`` and the shared store."""
        if not self._closed:
            self.inner.close()
            self.shared.close()
        super().close()


def make_evaluator(config: EvalConfig, *, ray_address: str | None = None, store: ResultStore | None = None,
                   **kw: Any) -> Evaluator:
    """A :class:`~cudal1.policy.ray_evaluator.RayEvaluator` when ``ray_address`` is given (``"local"`` starts a local instance), else a
    :class:`LocalEvaluator`; ``kw`` goes to the chosen class (``gpus``/``cpu_lanes`` or ``num_actors``,
    ``world_size``, ``rank``, ``pool_name`` ...). Under a multi-process launcher every rank calls this with
    the same arguments: the Ray evaluators of a run then share rank 0's actors (``$WORLD_SIZE``/``$RANK``)."""
    if ray_address:
        from .ray_evaluator import RayEvaluator

        return RayEvaluator(config, address=ray_address, store=store, **kw)
    return LocalEvaluator(config, store=store, **kw)


__all__ = ["Evaluator", "EvaluatorError", "LocalEvaluator", "Pair", "SharedMeasurements", "make_evaluator"]
