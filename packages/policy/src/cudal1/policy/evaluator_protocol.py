"""What every reward evaluator shares: the pair type, the :class:`Evaluator` protocol, the error for pairs left
without a result, and the closed-state guard. :mod:`cudal1.policy.evaluators` (local) and
:mod:`cudal1.policy.ray_evaluator` (Ray actors) both build on it; neither imports the other at module level."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from cudal1.harness import Candidate, EvalResult, Task

Pair = tuple[Task, Candidate]


class EvaluatorError(RuntimeError):
    """Some pairs got no result (their actors died). ``results`` holds what was measured, None elsewhere."""

    def __init__(self, message: str, results: list[EvalResult | None]) -> None:
        super().__init__(message)
        self.results = results


@runtime_checkable
class Evaluator(Protocol):
    def evaluate(self, pairs: Sequence[Pair], *, run: str = "", fresh: bool = False) -> list[EvalResult]:
        """One EvalResult per pair, in input order; stored under ``run`` when the evaluator has a store.
        ``fresh``: measure again even where the store holds a result (a re-measurement), storing the new one."""

    def close(self) -> None:
        """Stop the workers / actors; later ``evaluate`` calls raise RuntimeError."""

    def __enter__(self) -> Evaluator:
        """The evaluator itself (``with make_evaluator(...) as ev:``)."""

    def __exit__(self, *exc: object) -> None:
        """:meth:`close`."""


class _Closable:
    _closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"this {type(self).__name__} is closed; create a new one to evaluate more pairs")

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Evaluator", "EvaluatorError", "Pair"]
