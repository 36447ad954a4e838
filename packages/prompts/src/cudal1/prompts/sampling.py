"""Exemplar sampling for contrastive prompts: draw earlier solutions by score bucket.

Scored records are grouped into buckets of width ``bucket_width`` (bucket ``k`` holds the scores in
``[k * width, (k + 1) * width)``). ``n`` distinct buckets are drawn without replacement, each draw with
``P(B_i)`` proportional to ``exp((mean_i - mu) / tau)`` over the buckets not drawn yet, where ``mean_i``
is the mean score in bucket ``i`` and ``mu`` the mean of the bucket means. One record is then drawn
uniformly from each chosen bucket. A small ``tau`` favours the best buckets; a large one spreads the
draw evenly, so the prompt shows both fast and slow solutions.

Example:
    >>> import random
    >>> from cudal1.prompts.templates import Exemplar
    >>> recs = [Exemplar(code=f"# {s}", score=s) for s in (0.5, 0.6, 1.0, 2.0, 2.1)]
    >>> picked = sample_exemplars(recs, n=2, rng=random.Random(0))
    >>> len(picked), len({int(e.score // 0.25) for e in picked})
    (2, 2)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def _default_score(record: Any) -> float | None:
    """Read ``record.score``, falling back to ``record.speedup`` (e.g. a harness EvalResult)."""
    if hasattr(record, "score"):
        return record.score
    if hasattr(record, "speedup"):
        return record.speedup
    raise TypeError(
        f"cannot read a score from {type(record).__name__}: give it a .score or .speedup attribute, "
        "or pass score=... to sample_exemplars"
    )


@dataclass(frozen=True)
class Bucket:
    """One score bucket: its index (``floor(score / width)``), mean score and members (input order).

    Example:
        >>> Bucket(index=4, mean=1.1, members=("a", "b")).index
        4
    """

    index: int
    mean: float
    members: tuple[Any, ...]


def bucketize(
    records: Iterable[T], bucket_width: float = 0.25, score: Callable[[T], float | None] | None = None
) -> list[Bucket]:
    """Group records into score buckets, sorted by bucket index; records whose score is None are skipped.

    Raises:
        ValueError: ``bucket_width <= 0`` or a score is not finite.

    Example:
        >>> [(b.index, b.members) for b in bucketize([0.1, 0.2, 0.9], 0.5, score=lambda s: s)]
        [(0, (0.1, 0.2)), (1, (0.9,))]
    """
    if not bucket_width > 0 or not math.isfinite(bucket_width):
        raise ValueError(f"bucket_width must be a positive finite number, got {bucket_width!r}")
    get = score if score is not None else _default_score
    groups: dict[int, list[tuple[float, T]]] = {}
    for rec in records:
        s = get(rec)
        if s is None:
            continue
        s = float(s)
        if not math.isfinite(s):
            raise ValueError(f"score {s!r} of record {rec!r} is not finite; filter such records out first")
        groups.setdefault(math.floor(s / bucket_width), []).append((s, rec))
    return [
        Bucket(index=k, mean=math.fsum(s for s, _ in g) / len(g), members=tuple(r for _, r in g))
        for k, g in sorted(groups.items())
    ]


def bucket_weights(means: list[float], tau: float) -> list[float]:
    """Unnormalised weights ``exp((mean_i - mu) / tau)``, computed stably (shifted by the max).

    Shifting by a constant does not change the probabilities, only avoids overflow.

    Example:
        >>> [round(w, 4) for w in bucket_weights([0.0, 1.0], tau=1.0)]
        [0.3679, 1.0]
    """
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau!r}")
    top = max(means)
    return [math.exp((m - top) / tau) for m in means]


def sample_exemplars(
    records: Iterable[T],
    n: int = 2,
    tau: float = 1.0,
    bucket_width: float = 0.25,
    rng: random.Random | None = None,
    score: Callable[[T], float | None] | None = None,
) -> list[T]:
    """Draw ``n`` records from ``n`` distinct score buckets (see the module docstring).

    Args:
        records: scored records; the score is ``score(record)`` or by default ``record.score``
            (falling back to ``record.speedup``). Records scoring None are skipped.
        n: number of buckets (and records) to draw; fewer buckets than ``n`` -> one record from each.
        tau: temperature (> 0) of the bucket distribution, in score units.
        bucket_width: width (> 0) of a bucket, in score units.
        rng: source of randomness; the result is deterministic given its state. Default: a fresh
            unseeded ``random.Random``.
        score: optional function reading a record's score.

    Returns:
        The chosen records, in the order their buckets were drawn.

    Raises:
        ValueError: ``n < 1``, ``tau <= 0``, ``bucket_width <= 0`` or a non-finite score.

    Example:
        >>> import random
        >>> sample_exemplars([1.0, 1.05, 3.0], n=5, rng=random.Random(1), score=lambda s: s) in (
        ...     [1.0, 3.0], [1.05, 3.0], [3.0, 1.0], [3.0, 1.05])
        True
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not tau > 0 or math.isnan(tau):
        raise ValueError(f"tau must be > 0, got {tau!r}")
    buckets = bucketize(records, bucket_width, score)
    if not buckets:
        return []
    rng = rng if rng is not None else random.Random()
    means = [b.mean for b in buckets]
    mu = math.fsum(means) / len(means)
    remaining = list(range(len(buckets)))
    chosen: list[T] = []
    for _ in range(min(n, len(buckets))):
        # exp((mean_i - mu) / tau) over the buckets left, shifted by their max so that the best one
        # left weighs 1 (same probabilities, no overflow, never an all-zero total).
        left = bucket_weights([means[i] - mu for i in remaining], tau)
        weights = dict(zip(remaining, left, strict=True))
        total = math.fsum(left)
        u = rng.random() * total
        pick = remaining[-1]
        acc = 0.0
        for i in remaining:
            acc += weights[i]
            if u < acc:
                pick = i
                break
        remaining.remove(pick)
        members = buckets[pick].members
        chosen.append(members[rng.randrange(len(members))])
    return chosen
