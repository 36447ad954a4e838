"""Suspicion: when to re-measure, when a re-measurement confirms, and the review flow."""

from cudal1.harness.types import EvalResult
from cudal1.rewards import Suspicion, confirm, is_suspicious


def ok(s):
    return EvalResult(task="t", status="ok", speedup=s)


def test_is_suspicious():
    assert not is_suspicious(2.9)
    assert is_suspicious(3.1)
    assert is_suspicious(2.1, best_so_far=1.0)
    assert not is_suspicious(1.9, best_so_far=1.0)
    assert not is_suspicious(None)
    assert Suspicion(threshold=10).is_suspicious(5.0) is False


def test_confirm():
    assert confirm(ok(4.0), ok(4.3))[0]
    good, why = confirm(ok(4.0), ok(3.0))
    assert not good and "disagrees" in why
    bad = EvalResult(task="t", status="incorrect", reason="max_abs_err 3.0")
    good, why = confirm(ok(4.0), bad)
    assert not good and "incorrect" in why and "max_abs_err" in why


def test_review_calls_remeasure_only_when_suspicious():
    calls = []

    def remeasure(r):
        calls.append(r)
        return r.replace(speedup=r.speedup * 0.95)

    p = Suspicion()
    assert p.review(ok(1.5), remeasure) == ok(1.5) and not calls
    out = p.review(ok(5.0), remeasure)
    assert len(calls) == 1 and out.ok and out.speedup == 4.75 and "remeasured" in out.flags
    out = p.review(ok(5.0), lambda r: r.replace(speedup=1.1))
    assert out.status == "rejected" and out.speedup is None and "remeasure_disagrees" in out.flags
    assert out.timing["remeasured_speedups"] == [5.0, 1.1]
