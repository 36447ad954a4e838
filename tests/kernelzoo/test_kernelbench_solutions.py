"""The ``kernelbench-v0`` solution set against KernelBench's task files, on CPU.

Every file names a KernelBench task, has no static integrity flag, does not restate its reference, and computes
what its task computes: both models built with the harness's own setup (seeded inputs, randomised parameters
shared by name) on the task shrunk to ``kernelbench_small_sizes/<task>.json`` (its module-level size
constants replaced), outputs compared with the harness's tolerance. On CPU a solution runs its PyTorch fallback (the zoo's
ops run their references), so this checks composition, parameter handling and shapes; the kernels themselves
are checked and timed on a GPU by benchmarks/scripts/gpu_kb_release.sh. KernelBench is read from
``$CUDAL1_KERNELBENCH`` or ``../shared/kernelbench-v0`` beside the checkout; without it the tests skip.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from cudal1.harness import Task, load_suite
from cudal1.harness.compare import compare_outputs
from cudal1.harness.flags import UNTRUSTED_KINDS, kind_of
from cudal1.harness.loading import load_candidate
from cudal1.harness.models import clone_args, construct_model, load_reference, make_inputs
from cudal1.harness.params import share_parameters
from cudal1.harness.static_checks import analyse
from cudal1.kernelzoo.solutions import KERNELBENCH_V0, available

_ROOT = Path(__file__).resolve().parents[2]
KB = Path(os.environ.get("CUDAL1_KERNELBENCH", _ROOT.parent / "shared" / "kernelbench-v0"))
SOLUTIONS = available("kernelbench-v0")
#: written but not yet measured on a GPU: outside the set (the harness never sees them), checked here all the same;
#: a pending file may be a second version of a set file (same task name): both are checked
PENDING = {f"pending/{p.stem}": p for p in sorted((KERNELBENCH_V0 / "pending").glob("*.py"))}
FILES = {**SOLUTIONS, **PENDING}


def task_of(key: str) -> str:
    """The KernelBench task a key of FILES answers (``pending/NAME`` -> ``NAME``)."""
    return key.removeprefix("pending/")
SMALL_DIR = Path(__file__).parent / "kernelbench_small_sizes"
SMALL = {p.stem: json.loads(p.read_text()) for p in sorted(SMALL_DIR.glob("*.json"))}
pytestmark = pytest.mark.skipif(not (KB / "level1").is_dir(),
                                reason=f"KernelBench task files not found at {KB} (set CUDAL1_KERNELBENCH)")


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.name: t for t in load_suite(f"kernelbench:{KB}")}


#: a key of a reduced-sizes file: ``{"224": 24}`` replaces those integer literals inside ``def get_inputs`` (for tasks
#: that write a size there instead of in a module-level constant)
INLINE = "get_inputs literals"


def shrink_source(src: str, sizes: dict[str, Any]) -> tuple[str, set[str]]:
    """``src`` with each module-level ``NAME = ...`` line of ``sizes`` replaced by ``NAME = value`` (and the
    :data:`INLINE` literals of ``get_inputs`` replaced); also the names it had no such line (or function) for."""
    absent = set()
    for name, value in sizes.items():
        if name == INLINE:
            m = re.search(r"^def get_inputs\(.*\n(?:[ \t]+.*\n?)+", src, flags=re.M)
            if m is None:
                absent.add(name)
                continue
            body = m.group(0)
            for lit, new in value.items():
                body, k = re.subn(rf"\b{int(lit)}\b", str(int(new)), body)
                if not k:
                    absent.add(f"{name} {lit}")
            src = src[: m.start()] + body + src[m.end():]
            continue
        src, n = re.subn(rf"^{re.escape(name)}\s*=.*$", f"{name} = {value!r}", src, count=1, flags=re.M)
        if not n:
            absent.add(name)
    return src, absent


def shrunk(task: Task, sizes: dict[str, int]) -> Task:
    """``task`` with each module-level ``NAME = ...`` line of ``sizes`` replaced by ``NAME = value``."""
    src, absent = shrink_source(task.source, sizes)
    assert not absent, f"task {task.name} has no module-level constants {sorted(absent)}"
    return Task(name=task.name, source=src, level=task.level, suite="kernelbench-small", path=task.path)


def _body(src: str) -> str:
    """Source without comments, docstrings, blank lines and the class name, to tell a restated reference."""
    src = re.sub(r'"""[\s\S]*?"""', "", src)
    src = re.sub(r"#.*", "", src).replace("ModelNew", "Model")
    return "\n".join(line.rstrip() for line in src.splitlines() if line.strip())


@pytest.mark.parametrize("name", sorted(FILES))
def test_solution_names_a_task_and_is_clean(name, tasks):
    src = FILES[name].read_text(encoding="utf-8")
    name = task_of(name)
    assert name in tasks, f"kernelbench_v0/{name}.py names no KernelBench task"
    report = analyse(src)
    # a kernel written in the file is what a solution may do (the harness drops this static tag from results);
    # every other static flag must be one a verified result may carry
    untrusted = [f for f in report.flags if f != "custom_kernel_source" and kind_of(f) in UNTRUSTED_KINDS]
    assert not untrusted, f"{name}: static flags {untrusted}: {report.evidence}"
    ref_model = _body(tasks[name].source).split("batch_size")[0].split("def get_inputs")[0]
    assert ref_model.strip() not in _body(src), f"{name}: restates its reference"
    assert name in SMALL, f"{name}: no reduced sizes in tests/kernelzoo/kernelbench_small_sizes/{name}.json"


def missing_imports(src: str) -> list[str]:
    """Top-level modules a source imports that this environment does not have (KernelBench's Mamba2 tasks import
    einops, which the project does not depend on)."""
    mods = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            mods.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module.split(".")[0])
    return sorted(m for m in mods if importlib.util.find_spec(m) is None)


@pytest.mark.parametrize("name", sorted(FILES))
def test_solution_computes_its_task_on_cpu(name, tasks, tmp_path):
    path, name = FILES[name], task_of(name)
    absent = missing_imports(tasks[name].source)
    if absent:
        pytest.skip(f"task {name} imports {absent}, not installed here (checked on the GPU machine, which has them)")
    task = shrunk(tasks[name], SMALL[name])
    dev = torch.device("cpu")
    with torch.no_grad():
        reference, inputs, init_inputs = load_reference(task.source, tmp_path, 0, dev)
        # a solution that repeats one of the task's constants (the RNN tasks draw their initial state with the
        # module-level batch size in __init__) gets the same reduced value
        cand_src, _ = shrink_source(path.read_text(encoding="utf-8"), SMALL[name])
        cand = construct_model(load_candidate(cand_src, tmp_path), init_inputs, 0, dev)
        share_parameters(reference, cand)
        cand.eval()  # as the harness's worker does (the reference is in eval mode already)
        for seed in (1, 2):
            args = make_inputs(inputs, seed, dev)
            got, want = cand(*clone_args(args)), reference(*clone_args(args))
            cmp = compare_outputs(got, want)
            assert cmp.ok, f"{name} (inputs seed {seed}): {cmp.reason}"


def test_restated_reference_is_caught(tasks):
    """Adversarial twin of the restatement check: the reference itself, renamed, is refused."""
    task = tasks["23_Softmax"]
    src = task.source.replace("class Model(", "class ModelNew(")
    ref_model = _body(task.source).split("batch_size")[0]
    assert ref_model.strip() in _body(src)
