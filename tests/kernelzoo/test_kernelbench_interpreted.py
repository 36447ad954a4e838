"""The ``kernelbench-v0`` solutions' own Triton kernels, run in Triton's interpreter on CPU (issue 43, item 5).

``test_kernelbench_solutions.py`` runs every solution on CPU tensors, where each takes its PyTorch fallback (its GPU
path opens on ``x.is_cuda``), so a kernel that stored a constant passed it. Here each solution file that defines a
``@triton.jit`` kernel gets inputs that answer ``is_cuda`` with True (:class:`ClaimsCuda`: CPU memory, so Triton's
interpreter, which ``conftest.py`` turns on without a GPU, runs the kernels on it), at the reduced sizes of
``kernelbench_small_sizes/``, and:

* at least one Triton kernel launches, and the output matches the reference's (the harness's tolerance);
* the same file with every value its kernels store (``tl.store`` / ``tl.atomic_*``) changed by +1 fails: the
  kernels' results reach the output, so a wrong kernel cannot pass.

Files whose kernels cannot be reached this way are listed in :data:`UNREACHED` with the reason; for each, the
test checks that the reason still holds. On a machine with a GPU the kernels run for real in the release call
(benchmarks/scripts/gpu_kb_release.sh), and this module skips.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import torch

from cudal1.harness.compare import compare_outputs
from cudal1.harness.loading import load_candidate
from cudal1.harness.models import clone_args, construct_model, load_reference, make_inputs
from cudal1.harness.params import share_parameters
from cudal1.kernelzoo._triton import HAVE_TRITON

from .test_kernelbench_solutions import FILES, KB, SMALL, missing_imports, shrink_source, shrunk, task_of

KERNEL_FILES = {k: p for k, p in FILES.items() if "@triton.jit" in p.read_text(encoding="utf-8")}

#: files whose kernels the interpreter does not reach on CPU tensors, and why (each reason is checked below)
UNREACHED = {
    "19_MobileNetV1": "cuDNN: its GPU path fuses convolution and ReLU with aten::cudnn_convolution_relu, which has no "
                      "CPU kernel",
    "20_MobileNetV2": "cuDNN: its GPU path fuses convolution and ReLU with aten::cudnn_convolution_relu, which has no "
                      "CPU kernel",
    "29_SwinMLP": "partial: its blocks write into tensors made with torch.empty, plain CPU tensors whose is_cuda is "
                  "False, so only the first kernel runs and the output does not depend on the others",
}
#: files the interpreter reaches but too slowly for the suite (a whole model of Python-level program instances)
TOO_SLOW = {"30_SwinTransformerV2": "over 120 s in the interpreter at its reduced sizes (2026-12-05, 2-core CPU)"}

pytestmark = [
    pytest.mark.skipif(not (KB / "level1").is_dir(), reason=f"KernelBench task files not found at {KB}"),
    pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not installed: its interpreter is what runs the kernels"),
    pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: the kernels run for real in the release call"),
]


class ClaimsCuda(torch.Tensor):
    """A CPU tensor whose ``is_cuda`` is True: a solution's GPU gate opens and its kernels run in the interpreter.
    Results of torch operations on it are of this class too (torch's default ``__torch_function__``); tensors a
    solution makes from scratch (``torch.empty(..., device=x.device)``) are plain CPU tensors."""

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return True


def _claiming(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.as_subclass(ClaimsCuda)
    if isinstance(v, (list, tuple)):
        return type(v)(_claiming(x) for x in v)
    return v


def _plain(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.as_subclass(torch.Tensor)
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    return v


class _Launches:
    """Counts the interpreter's kernel launches while in use."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from triton.runtime.interpreter import InterpretedFunction

        self.n = 0
        run = InterpretedFunction.run

        def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
            self.n += 1
            return run(fn, *args, **kwargs)

        monkeypatch.setattr(InterpretedFunction, "run", counted)


class _ChangeStores(ast.NodeTransformer):
    """Inside ``@triton.jit`` functions, every stored value ``v`` (``tl.store(p, v)``, ``tl.atomic_*(p, v)``)
    becomes ``v + 1``; a ``@triton.jit`` helper that stores nothing (a device function inlined into kernels, such
    as a convolution tile) returns ``v + 1`` instead of ``v``."""

    def __init__(self) -> None:
        self.changed = 0
        self._in_kernel = False
        self._helper = False

    @staticmethod
    def _stores(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                   and (c.func.attr == "store" or c.func.attr.startswith("atomic_")) for c in ast.walk(node))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        outer = (self._in_kernel, self._helper)
        jit = any("jit" in ast.unparse(d) for d in node.decorator_list)
        self._in_kernel = outer[0] or jit
        self._helper = jit and not self._stores(node)
        self.generic_visit(node)
        self._in_kernel, self._helper = outer
        return node

    def visit_Return(self, node: ast.Return) -> ast.Return:
        self.generic_visit(node)
        if self._helper and node.value is not None:
            node.value = ast.BinOp(node.value, ast.Add(), ast.Constant(1))
            self.changed += 1
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        f = node.func
        if (self._in_kernel and isinstance(f, ast.Attribute) and len(node.args) >= 2
                and (f.attr == "store" or f.attr.startswith("atomic_"))):
            node.args[1] = ast.BinOp(node.args[1], ast.Add(), ast.Constant(1))
            self.changed += 1
        return node


def stores_changed(src: str) -> tuple[str, int]:
    """``src`` with every value its kernels store (or its store-free helpers return) changed by +1, and how many
    were changed."""
    t = _ChangeStores()
    tree = ast.fix_missing_locations(t.visit(ast.parse(src)))
    return ast.unparse(tree), t.changed


def run_claiming_cuda(name: str, src: str, tasks: dict, tmp_path: Path, launches: _Launches) -> tuple[int, Any]:
    """(kernel launches, comparison with the reference) of solution source ``src`` of task ``name`` on inputs that
    claim to be on the GPU, at the task's reduced sizes."""
    task = shrunk(tasks[name], SMALL[name])
    tmp_path.mkdir(parents=True, exist_ok=True)
    dev = torch.device("cpu")
    with torch.no_grad():
        reference, inputs, init_inputs = load_reference(task.source, tmp_path, 0, dev)
        cand_src, _ = shrink_source(src, SMALL[name])
        cand = construct_model(load_candidate(cand_src, tmp_path), init_inputs, 0, dev)
        share_parameters(reference, cand)
        cand.eval()
        args = make_inputs(inputs, 1, dev)
        launches.n = 0
        got = _plain(cand(*_claiming(clone_args(args))))
        n = launches.n
        return n, compare_outputs(got, reference(*clone_args(args)))


@pytest.fixture(scope="module")
def tasks() -> dict:
    from cudal1.harness import load_suite

    return {t.name: t for t in load_suite(f"kernelbench:{KB}")}


@pytest.mark.parametrize("key", sorted(KERNEL_FILES))
def test_kernels_run_interpreted_and_a_changed_store_fails(key, tasks, tmp_path, monkeypatch):
    name = task_of(key)
    if name in TOO_SLOW:
        pytest.skip(f"{name}: {TOO_SLOW[name]}")
    absent = missing_imports(tasks[name].source)
    if absent:
        pytest.skip(f"task {name} imports {absent}, not installed here (checked on the GPU machine)")
    src = KERNEL_FILES[key].read_text(encoding="utf-8")
    launches = _Launches(monkeypatch)
    try:
        n, cmp = run_claiming_cuda(name, src, tasks, tmp_path / "as-is", launches)
    except Exception as e:  # noqa: BLE001 - a cuDNN-only file's reason is an error of this kind
        if UNREACHED.get(name, "").startswith("cuDNN") and "cudnn" in str(e).lower():
            return
        raise AssertionError(f"{key}: its GPU path raised on CPU tensors in the interpreter: {e}") from e
    if name in UNREACHED and n == 0:
        return
    assert n > 0, f"{key}: no Triton kernel ran on inputs that claim to be on the GPU"
    assert cmp.ok, f"{key}: its Triton path's output differs from the reference's: {cmp.reason}"
    changed_src, changed = stores_changed(src)
    assert changed > 0, f"{key}: no tl.store / tl.atomic_* found in its kernels"
    try:
        _, cmp2 = run_claiming_cuda(name, changed_src, tasks, tmp_path / "changed", launches)
        caught = not cmp2.ok
    except Exception:  # noqa: BLE001 - a changed kernel that breaks the run is caught too
        caught = True
    if name in UNREACHED:
        assert not caught, (f"{key} is listed as unreached ({UNREACHED[name]}) but its kernels now reach its "
                            "output: take it off UNREACHED")
        return
    assert caught, f"{key}: its kernels' stored values changed by +1 and the output still matched the reference"


def test_a_changed_store_is_found_and_an_honest_file_is_not_flagged():
    """The mutation finds stores of every kind inside kernels only (the host code is left alone)."""
    src = ("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p, q):\n    tl.store(p, 1.0)\n"
           "    tl.atomic_add(q, 2.0)\n    return\n@triton.jit\ndef tile(x):\n    return x * 2\n"
           "def host(x):\n    x.store(1, 2)\n    return x\n")
    out, n = stores_changed(src)
    assert n == 3 and "tl.store(p, 1.0 + 1)" in out and "tl.atomic_add(q, 2.0 + 1)" in out
    assert "return x * 2 + 1" in out and "x.store(1, 2)" in out and out.endswith("return x")


BLOCKS = Path(__file__).resolve().parents[2] / "packages" / "kernelzoo" / "src" / "cudal1" / "kernelzoo" / "blocks"
#: each blocks/ module with Triton kernels -> the set's files that import it
BLOCK_USERS = {
    b.stem: sorted(k for k in FILES if task_of(k) not in UNREACHED and task_of(k) not in TOO_SLOW
                   and f"blocks.{b.stem} import" in FILES[k].read_text(encoding="utf-8"))
    for b in sorted(BLOCKS.glob("*.py")) if "@triton.jit" in b.read_text(encoding="utf-8")
}


def _changed_block(block: str, tmp_path: Path) -> Any:
    """``cudal1.kernelzoo.blocks.<block>`` loaded from a copy whose kernels' stored values are changed by +1 (a
    file, so that Triton's interpreter can read the kernels' source; relative imports resolve in the package)."""
    import importlib.util

    src, changed = stores_changed((BLOCKS / f"{block}.py").read_text(encoding="utf-8"))
    assert changed > 0, f"blocks/{block}.py: nothing stored or returned in its kernels"
    path = tmp_path / f"{block}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"cudal1.kernelzoo.blocks.{block}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("block", sorted(b for b, users in BLOCK_USERS.items() if users))
def test_a_changed_block_kernel_fails_a_solution_that_uses_it(block, tasks, tmp_path, monkeypatch):
    """blocks/ kernels (``bn_act``, ``densenet``, ``netvlad``, ``shufflenet`` have no tests of their own): with every
    value they store changed by +1, a solution of the set that imports the block no longer matches its reference."""
    import sys

    launches = _Launches(monkeypatch)
    monkeypatch.setitem(sys.modules, f"cudal1.kernelzoo.blocks.{block}", _changed_block(block, tmp_path))
    tried = []
    for key in BLOCK_USERS[block]:
        name = task_of(key)
        if missing_imports(tasks[name].source):
            continue
        tried.append(key)
        try:
            n, cmp = run_claiming_cuda(name, FILES[key].read_text(encoding="utf-8"), tasks, tmp_path / key, launches)
        except Exception:  # noqa: BLE001 - a changed kernel that breaks the run is caught too
            return
        if not cmp.ok:
            return
    pytest.fail(f"blocks/{block}.py: its kernels' stored values changed by +1 and every user still matched its "
                f"reference: {tried}")
