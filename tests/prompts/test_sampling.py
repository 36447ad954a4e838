"""Property tests for the score-bucket exemplar sampler."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudal1.prompts import Exemplar, bucketize, sample_exemplars

scores = st.lists(st.floats(min_value=0.0, max_value=10.0, allow_nan=False), min_size=0, max_size=40)
widths = st.sampled_from([0.1, 0.25, 0.5, 1.0])
taus = st.floats(min_value=0.01, max_value=10.0)


def make(ss: list[float]) -> list[Exemplar]:
    return [Exemplar(code=f"# {i}", score=s) for i, s in enumerate(ss)]


@settings(max_examples=60, deadline=None)
@given(ss=scores, n=st.integers(1, 6), tau=taus, width=widths, seed=st.integers(0, 2**32 - 1))
def test_deterministic_given_seed(ss, n, tau, width, seed):
    recs = make(ss)
    a = sample_exemplars(recs, n=n, tau=tau, bucket_width=width, rng=random.Random(seed))
    b = sample_exemplars(recs, n=n, tau=tau, bucket_width=width, rng=random.Random(seed))
    assert a == b


@settings(max_examples=60, deadline=None)
@given(ss=scores, n=st.integers(1, 6), tau=taus, width=widths, seed=st.integers(0, 2**32 - 1))
def test_distinct_buckets_and_count(ss, n, tau, width, seed):
    recs = make(ss)
    picked = sample_exemplars(recs, n=n, tau=tau, bucket_width=width, rng=random.Random(seed))
    n_buckets = len(bucketize(recs, width))
    assert len(picked) == min(n, n_buckets)
    idx = [math.floor(e.score / width) for e in picked]
    assert len(set(idx)) == len(idx)
    assert all(any(p is r for r in recs) for p in picked)


def test_higher_mean_buckets_drawn_more_often():
    # Buckets of width 0.25 with means 0.1, 0.6, 1.1 and 2.1; several records per bucket.
    recs = make([0.05, 0.1, 0.15, 0.55, 0.6, 0.65, 1.05, 1.1, 1.15, 2.05, 2.1, 2.15])
    rng = random.Random(1234)
    draws = 4000
    counts = Counter(
        math.floor(e.score / 0.25)
        for e in (sample_exemplars(recs, n=1, tau=0.5, rng=rng)[0] for _ in range(draws))
    )
    order = [0, 2, 4, 8]
    assert [counts[b] for b in order] == sorted(counts[b] for b in order)
    # Compare with the exact distribution exp((mean - mu) / tau), normalised.
    means = [0.1, 0.6, 1.1, 2.1]
    mu = sum(means) / len(means)
    w = [math.exp((m - mu) / 0.5) for m in means]
    expected = [x / sum(w) for x in w]
    for b, p in zip(order, expected):
        assert abs(counts[b] / draws - p) < 0.03, (b, counts[b] / draws, p)


def test_small_tau_picks_best_bucket_first_large_tau_is_near_uniform():
    recs = make([0.1, 1.1, 2.1])
    rng = random.Random(7)
    assert all(sample_exemplars(recs, n=1, tau=0.01, rng=rng)[0].score == 2.1 for _ in range(200))
    counts = Counter(sample_exemplars(recs, n=1, tau=1e6, rng=rng)[0].score for _ in range(3000))
    assert all(abs(c / 3000 - 1 / 3) < 0.05 for c in counts.values())


def test_uniform_within_bucket():
    recs = make([1.0, 1.05, 1.1, 1.15])  # one bucket
    rng = random.Random(3)
    counts = Counter(sample_exemplars(recs, n=1, rng=rng)[0].code for _ in range(4000))
    assert len(counts) == 4 and all(abs(c / 4000 - 0.25) < 0.04 for c in counts.values())


def test_fewer_buckets_than_n_returns_one_from_each():
    recs = make([0.1, 0.12, 3.0])
    picked = sample_exemplars(recs, n=5, rng=random.Random(0))
    assert sorted(math.floor(e.score / 0.25) for e in picked) == [0, 12]


def test_unscored_records_skipped_and_empty_input():
    recs = [Exemplar(code="a", score=None, status="compile_error"), Exemplar(code="b", score=1.0)]
    assert [e.code for e in sample_exemplars(recs, n=2, rng=random.Random(0))] == ["b"]
    assert sample_exemplars([], n=2, rng=random.Random(0)) == []


def test_custom_score_and_speedup_fallback():
    class Result:
        def __init__(self, speedup):
            self.speedup = speedup

    picked = sample_exemplars([Result(1.0), Result(2.0)], n=2, rng=random.Random(0))
    assert sorted(r.speedup for r in picked) == [1.0, 2.0]
    assert sample_exemplars([("x", 1.5)], n=1, rng=random.Random(0), score=lambda t: t[1]) == [("x", 1.5)]
    with pytest.raises(TypeError, match="score"):
        sample_exemplars([object()], n=1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be"),
        ({"n": -1}, "n must be"),
        ({"tau": 0.0}, "tau must be"),
        ({"tau": -1.0}, "tau must be"),
        ({"bucket_width": 0.0}, "bucket_width"),
        ({"bucket_width": -0.25}, "bucket_width"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sample_exemplars(make([1.0, 2.0]), **kwargs)


def test_non_finite_score_rejected():
    with pytest.raises(ValueError, match="not finite"):
        sample_exemplars(make([1.0, float("inf")]), n=1)
