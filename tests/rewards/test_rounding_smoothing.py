"""Property tests for round_toward_one and group_smooth."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudal1.rewards import group_smooth, round_toward_one

xs = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)
decs = st.integers(min_value=0, max_value=3)


def test_examples():
    assert round_toward_one(1.118) == 1.11
    assert round_toward_one(0.992) == 1.0
    assert round_toward_one(0.5) == 0.5


@given(xs, xs, decs)
def test_monotone(a, b, d):
    a, b = sorted((a, b))
    assert round_toward_one(a, d) <= round_toward_one(b, d)


@given(xs, decs)
def test_toward_one_idempotent_and_close(x, d):
    r = round_toward_one(x, d)
    assert abs(r - 1.0) <= abs(x - 1.0) + 1e-9
    assert (r >= 1.0) == (x >= 1.0) or r == 1.0
    assert round_toward_one(r, d) == r
    assert abs(r - x) <= 10.0**-d + 1e-9


groups = st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=30)


@given(groups)
def test_smooth_clip_bounds(g):
    out = group_smooth(g)
    assert len(out) == len(g)
    assert all(-1.5 <= v <= 1.5 for v in out)


@given(groups)
def test_smooth_zero_mean_unit_std_without_clip(g):
    out = group_smooth(g, clip=None)
    assert abs(math.fsum(out) / len(out)) < 1e-6
    if any(v != 0 for v in out):
        assert math.sqrt(math.fsum(v * v for v in out) / len(out)) == pytest.approx(1.0, rel=1e-6)


@given(groups)
def test_smooth_order_preserving(g):
    out = group_smooth(g)
    for i in range(len(g)):
        for j in range(len(g)):
            if g[i] < g[j]:
                assert out[i] <= out[j]


def test_smooth_equal_group_and_errors():
    assert group_smooth([0.7] * 5) == [0.0] * 5
    assert group_smooth([]) == []
    with pytest.raises(ValueError, match="finite"):
        group_smooth([1.0, float("nan")])
    with pytest.raises(ValueError, match="low <= high"):
        group_smooth([1.0, 2.0], clip=(1.0, -1.0))
    assert max(group_smooth([0.0] * 9 + [100.0])) == 1.5
