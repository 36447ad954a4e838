"""Imports of a kernel library that cannot succeed are answered in the parent (:mod:`cudal1.harness.library_imports`):
``compile_error`` with no worker and no reference, as the worker would have answered after seconds. Each case has
its twin that must still go to a worker: a name the library has, an import a ``try`` guards, an import inside a
function, a module the parent cannot judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalPool, reference_candidate
from cudal1.harness import library_imports as li
from cudal1.harness.library_imports import library_import_problem

ZOO = Path(__file__).resolve().parents[2] / "packages" / "kernelzoo" / "src" / "cudal1" / "kernelzoo"


@pytest.mark.parametrize("source, expected", [
    ("from cudal1.kernelzoo import conv2d\n", "cannot import name 'conv2d' from 'cudal1.kernelzoo'"),
    ("import torch\nfrom cudal1.kernelzoo import softmax, matmul_large_k\n", "'matmul_large_k'"),
    ("from cudal1.kernelzoo.ops.conv2d import conv2d\n", "no module named 'cudal1.kernelzoo.ops.conv2d'"),
    ("import cudal1.kernelzoo.ops.nothing as z\n", "no module named 'cudal1.kernelzoo.ops.nothing'"),
    ("from cudal1.kernelzao import softmax\n", "no module named 'cudal1.kernelzao'"),  # the namespace: a typo
    ("import cudal1.linear\n", "no module named 'cudal1.linear'"),
])
def test_an_import_the_library_cannot_answer_is_found_without_running_anything(source, expected):
    assert expected in library_import_problem(source)


@pytest.mark.parametrize("source", [
    "from cudal1.kernelzoo import softmax, layer_norm, add_layer_norm_\n",
    "from cudal1.kernelzoo import ops\nfrom cudal1.kernelzoo.ops import softmax as sm\n",  # a submodule, a module
    "from cudal1.kernelzoo.ops.softmax import softmax, softmax_ref\nimport cudal1.kernelzoo.ops.layer_norm\n",
    "try:\n    from cudal1.kernelzoo import conv2d\nexcept ImportError:\n    conv2d = None\n",  # the try decides
    "def forward(x):\n    from cudal1.kernelzoo import conv2d\n    return conv2d(x)\n",  # a call decides, later
    "from cudal1.harness import no_such_name\n",  # another package of the namespace: only modules are judged
    "import os.path\nfrom torch import nn\nimport nn_missing_elsewhere\n",  # not a kernel library's
    "from cudal1.kernelzoo import (\n",  # does not parse: the syntax check's to answer
])
def test_what_might_import_is_left_to_the_worker(source):
    assert library_import_problem(source) == ""


def test_every_released_solution_that_imports_the_zoo_passes():
    files = [p for d in ("released", "kernelbench_v0") for p in (ZOO / d).rglob("*.py")
             if "cudal1.kernelzoo" in p.read_text()]
    assert len(files) > 150
    flagged = {p.name: library_import_problem(p.read_text()) for p in files}
    assert {k: v for k, v in flagged.items() if v} == {}


def test_a_module_whose_names_need_running_it_is_never_judged(tmp_path, monkeypatch):
    pkg = tmp_path / "lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def __getattr__(name):\n    return name\n")
    (pkg / "star.py").write_text("from math import *\n")
    (pkg / "plain.py").write_text("if True:\n    a = 1\nelse:\n    b = 2\ntry:\n    import json as c\nexcept ImportError:\n"
                                  "    c = None\nclass D: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(li, "kernel_libraries", lambda: {"lib": "lib"})
    assert library_import_problem("from lib import anything\nfrom lib.star import pi\n") == ""
    assert library_import_problem("from lib.plain import a, b, c, D\n") == ""
    assert "'e'" in library_import_problem("from lib.plain import a, e\n")


def test_the_pool_answers_such_a_candidate_without_a_worker_and_passes_its_twin_to_one(fixture_tasks, fast_config):
    task = fixture_tasks["tiny_linear_relu"]
    pool = EvalPool(fast_config)
    real_take, real_ref = pool.lanes[0].take_candidate_worker, pool.lanes[0].reference_for
    pool.lanes[0].take_candidate_worker = lambda: pytest.fail("a worker was started for an import that cannot work")
    pool.lanes[0].reference_for = lambda task: pytest.fail("a reference was set up for an import that cannot work")
    src = reference_candidate(task).source
    bad = Candidate(source="from cudal1.kernelzoo import conv2d\n" + src, task=task.name, origin="test")
    (res,) = pool.map([(task, bad)])
    assert res.status == "compile_error" and "cannot import name 'conv2d'" in res.reason and res.wall_s < 1.0
    pool.lanes[0].take_candidate_worker, pool.lanes[0].reference_for = real_take, real_ref
    good = Candidate(source="from cudal1.kernelzoo import relu  # noqa: F401\n" + src, task=task.name, origin="test")
    try:
        (res,) = pool.map([(task, good)])
    finally:
        pool.close()
    assert res.status == "ok", res.reason
