"""Runs that share their measurements (``eval.shared_store``, :class:`cudal1.policy.evaluators.SharedMeasurements`):
a pair one run measured is taken by another only when it is the exact pair under the same settings and the same
kernel-library code, measured in a sandbox; re-measurements always measure. A scripted inner evaluator stands in
for the harness (what it is asked to measure is the point)."""

from __future__ import annotations

from pathlib import Path

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore, load_suite
from cudal1.harness.techniques import library_digest
from cudal1.policy.evaluators import SharedMeasurements
from cudal1.policy.pipeline import _make_evaluator
from cudal1.policy.recipe import load_recipe

FIXTURES = Path(__file__).parents[1] / "harness" / "fixtures"
CONFIGS = Path(__file__).parents[2] / "apps" / "configs"
TASK = next(t for t in load_suite(f"dir:{FIXTURES / 'tasks'}") if t.name == "tiny_linear_relu")
CONFIG = EvalConfig(device="cpu", trials=2)


def cand(k: int) -> Candidate:
    return Candidate(source=TASK.source.replace("class Model", "class ModelNew") + f"\n# variant {k}\n",
                     task=TASK.name)


class Scripted:
    """An inner evaluator: every pair measured gets a fresh speedup, as the pool would record it."""

    def __init__(self, flags: list[str] | None = None, digest: str | None = None) -> None:
        self.asked: list[list[str]] = []
        self.flags, self.digest, self.n = flags or [], digest, 0
        self.closed = False

    def evaluate(self, pairs, *, run="", fresh=False):
        self.asked.append([c.source.rstrip()[-1] for _, c in pairs])
        out = []
        for _, c in pairs:
            self.n += 1
            out.append(EvalResult(task=TASK.name, status="ok", speedup=1.0 + self.n / 100, flags=list(self.flags),
                                  build={"library_digest": self.digest if self.digest is not None
                                         else library_digest(c.source)}))
        return out

    def close(self):
        self.closed = True


def test_a_pair_another_run_measured_is_taken_and_kept_in_this_runs_store(tmp_path):
    shared = tmp_path / "measurements.sqlite"
    a_store, b_store = ResultStore(tmp_path / "a.sqlite"), ResultStore(tmp_path / "b.sqlite")
    a_inner, b_inner = Scripted(), Scripted()
    a = SharedMeasurements(a_inner, ResultStore(shared), CONFIG, a_store)
    b = SharedMeasurements(b_inner, ResultStore(shared), CONFIG, b_store)
    ra = a.evaluate([(TASK, cand(1)), (TASK, cand(2))], run="a")
    rb = b.evaluate([(TASK, cand(1)), (TASK, cand(3))], run="b")
    assert a_inner.asked == [["1", "2"]] and b_inner.asked == [["3"]]  # pair 1 was timed once, by run a
    assert rb[0].speedup == ra[0].speedup and b.taken == 1
    assert b_store.lookup(TASK, cand(1), CONFIG).speedup == ra[0].speedup  # as if measured by run b
    # a re-measurement measures, and is the shared store's latest from then on
    [again] = b.evaluate([(TASK, cand(1))], run="b:remeasure", fresh=True)
    assert b_inner.asked[-1] == ["1"] and again.speedup != ra[0].speedup
    assert ResultStore(shared).lookup(TASK, cand(1), CONFIG).speedup == again.speedup
    a.close()
    b.close()
    assert a_inner.closed and b_inner.closed


def test_other_settings_other_library_code_and_unsandboxed_results_are_measured_again(tmp_path):
    shared = tmp_path / "measurements.sqlite"
    SharedMeasurements(Scripted(), ResultStore(shared), CONFIG, None).evaluate([(TASK, cand(1))])
    other = Scripted()
    SharedMeasurements(other, ResultStore(shared), CONFIG.replace(trials=3), None).evaluate([(TASK, cand(1))])
    assert other.asked == [["1"]]  # other harness settings: another measurement
    SharedMeasurements(Scripted(digest="older library"), ResultStore(shared), CONFIG, None).evaluate(
        [(TASK, cand(2))])
    later = Scripted()
    SharedMeasurements(later, ResultStore(shared), CONFIG, None).evaluate([(TASK, cand(2))])
    assert later.asked == [["2"]]  # measured with other kernel-library code than the candidate imports now
    SharedMeasurements(Scripted(flags=["unsandboxed"]), ResultStore(shared), CONFIG, None).evaluate(
        [(TASK, cand(3))])
    careful = Scripted()
    SharedMeasurements(careful, ResultStore(shared), CONFIG, None).evaluate([(TASK, cand(3))])
    assert careful.asked == [["3"]]


def test_a_recipe_with_a_shared_store_gets_evaluators_that_share(tmp_path):
    recipe = load_recipe("default", ["eval.device=cpu", f"eval.shared_store={tmp_path / 'm.sqlite'}"],
                         configs_dir=CONFIGS)
    ev = _make_evaluator(recipe, CONFIG, ResultStore(tmp_path / "own.sqlite"))
    try:
        assert isinstance(ev, SharedMeasurements) and Path(ev.shared.path) == tmp_path / "m.sqlite"
    finally:
        ev.close()
    plain = _make_evaluator(load_recipe("default", ["eval.device=cpu"], configs_dir=CONFIGS), CONFIG, ResultStore(tmp_path / "o.sqlite"))
    try:
        assert not isinstance(plain, SharedMeasurements)
    finally:
        plain.close()
