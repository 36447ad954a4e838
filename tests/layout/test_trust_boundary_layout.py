"""The trust boundary in the harness's layout (issue 44): every module of ``cudal1.harness`` is on one side of it.

- **worker side**: code that runs in a worker process, beside candidate code (the worker's entry point, its
  session, what it writes about outputs, its clock, the template's fork loop, its own limits, the in-process checks);
- **parent side**: code that runs only in the parent, which owns every verdict (the pool and its lanes, the pair's
  protocol, process and sandbox management, parsing and judging what workers send, statistics, verdicts, stores);
- **shared**: pure vocabulary and functions both sides use (settings, types, flags, comparison and digest maths,
  what crosses the wire).

The rules: a worker-side module never depends on a parent-side one (so nothing the parent decides with is
reachable by following the worker's imports), a parent-side module never imports a worker-side one, and shared
modules import only shared ones. (A worker process still executes the package's ``__init__``, the public API, as
Python runs every parent package first; the rules are about what each module's code depends on.) The harness
README's "Layout" section names the same sides.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("cudal1_layout_import_graph", Path(__file__).with_name("test_import_graph.py"))
assert _spec is not None and _spec.loader is not None
graph_of = importlib.util.module_from_spec(_spec)  # the import graph of packages/ (tests/layout/test_import_graph.py)
_spec.loader.exec_module(graph_of)

H = "cudal1.harness"
WORKER = {"worker", "session", "reference_session", "candidate_session", "outputs", "timer", "template_server", "address_space", "loading", "models", "params",
          "allocator", "baselines", "task_checks", "integrity", "environment"}
SHARED = {"wire", "types", "config", "flags", "compare", "digest", "digest_kernel", "buildcache", "novelty"}
PARENT = {"", "__main__", "pool", "lanes", "gate", "builds", "pair", "rounds", "reference_side", "drift_recheck", "cpu_wait",
          "process", "sandbox", "resources", "template", "leaves", "protocol", "verdict", "clockcheck", "attempts", "timing",
          "store", "cli", "report", "report_html", "roofline", "summary", "solutions", "suite", "static_checks",
          "syntax", "library_imports", "techniques", "devices"}


def _harness_graph() -> dict[str, set[str]]:
    """Harness module (short name; the package itself is ``""``) -> the harness modules it imports."""
    edges = graph_of.import_edges(graph_of.modules())

    def short(m: str) -> str:
        return "" if m == H else m.removeprefix(H + ".")

    return {short(m): {short(t) for t in ts if t == H or t.startswith(H + ".")}
            for m, ts in edges.items() if (m == H or m.startswith(H + ".")) and ".builtin_tasks" not in m}


def test_every_harness_module_is_on_one_side():
    graph = _harness_graph()
    assert not (WORKER & SHARED or WORKER & PARENT or SHARED & PARENT)
    unplaced = sorted(set(graph) - WORKER - SHARED - PARENT)
    assert not unplaced, f"place each new harness module on a side of the trust boundary in this test: {unplaced}"
    gone = sorted((WORKER | SHARED | PARENT) - set(graph))
    assert not gone, f"modules named here that no longer exist: {gone}"


def test_the_worker_side_never_depends_on_the_parent_side():
    graph = _harness_graph()
    seen, todo = set(), ["worker"]
    while todo:  # everything the worker's entry point reaches through imports
        for t in graph[todo.pop()] - seen:
            seen.add(t)
            todo.append(t)
    assert not seen & PARENT, f"the worker process's code reaches parent-side modules: {sorted(seen & PARENT)}"
    bad = {m: sorted(graph[m] & PARENT) for m in WORKER if graph[m] & PARENT}
    assert not bad, f"worker-side modules import parent-side ones: {bad}"


def test_the_parent_side_never_imports_the_worker_side_and_shared_modules_stand_alone():
    graph = _harness_graph()
    bad = {m: sorted(graph[m] & WORKER) for m in PARENT if graph[m] & WORKER}
    assert not bad, f"parent-side modules import worker-side ones (move what both use to a shared module): {bad}"
    impure = {m: sorted(graph[m] - SHARED) for m in SHARED if graph[m] - SHARED}
    assert not impure, f"shared modules import one side: {impure}"


def test_the_rules_catch_a_crossing(monkeypatch):
    """The twin that must fail: a parent-side import added to a worker-side module is found."""
    real = graph_of.import_edges

    def crossed(mods):
        edges = real(mods)
        edges[f"{H}.session"] = edges[f"{H}.session"] | {f"{H}.pair"}
        edges[f"{H}.pool"] = edges[f"{H}.pool"] | {f"{H}.outputs"}
        return edges

    monkeypatch.setattr(graph_of, "import_edges", crossed)
    graph = _harness_graph()
    assert "pair" in graph["session"] and "outputs" in graph["pool"]
    with pytest.raises(AssertionError, match="pair"):
        test_the_worker_side_never_depends_on_the_parent_side()
    with pytest.raises(AssertionError, match="outputs"):
        test_the_parent_side_never_imports_the_worker_side_and_shared_modules_stand_alone()
