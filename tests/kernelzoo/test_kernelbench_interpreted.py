"""The ``kernelbench-v0`` solutions' own Triton kernels, run in Triton's interpreter on CPU (issue 43, item 5).

``test_kernelbench_solutions.py`` runs every solution on CPU tensors, where each takes its PyTorch fallback (its GPU
path opens on ``x.is_cuda``), so a kernel that stored a constant passed it. Here each solution file that defines a
``@triton.jit`` kernel gets inputs that answer ``is_cuda`` with True (:class:`ClaimsCuda`: CPU memory, so Triton's
interpreter, which ``conftest.py`` turns on without a GPU, runs the kernels on it), at the reduced sizes of
``kernelbench_small_sizes/``, and:

* at least one Triton kernel launches, and the output matches the reference's (the harness's tolerance);
* for each ``@triton.jit`` function of the file on its own, the file with every value that function stores
  (``tl.store`` / ``tl.atomic_*``; a store-free helper: returns) changed by +1, or else doubled (a softmax is blind
  to a +1 on every logit of a row), fails: every kernel's results reach the output, so no wrong kernel can pass.

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
#: files whose output a change of one kernel can leave as it is, because the task's own output barely depends on its
#: input (the harness flags both ``task_degenerate``): for these, a change of every kernel at once must be caught
SATURATED = {
    "58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp_Max": "the clamp to [-1, 1] saturates: a change of the "
        "transposed convolution before it does not reach the output at the reduced sizes",
    "83_Conv3d_GroupNorm_Min_Clamp_Dropout": "min(., 0) then clamp(0, 1) makes every finite value 0: only the last "
        "kernel's stores reach the output",
}
#: files the interpreter reaches but too slowly for the suite (a whole model of Python-level program instances)
TOO_SLOW = {"30_SwinTransformerV2": "over 120 s in the interpreter at its reduced sizes (2026-12-05, 2-core CPU); its "
                                    "kernels run on one small block instead (test_swin_v2_block_kernels_...)"}

#: smaller sizes than ``kernelbench_small_sizes/`` for files whose kernels run many program instances in the
#: interpreter: one sample of the batch (their kernels index the batch like any other dimension), which halves their
#: time in the suite; every kernel still runs and each changed store still fails
INTERPRETED_SIZES = {
    "72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool": {"batch_size": 1},
    "60_ConvTranspose3d_Swish_GroupNorm_HardSwish": {"batch_size": 1},
    "8_ResNetBasicBlock": {"batch_size": 1},
}

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

    def __init__(self, only: str | None = None, double: bool = False) -> None:
        self.changed = 0
        self.only = only  # the one ``@triton.jit`` function to change (None: every one)
        self.double = double  # ``v * 2`` instead of ``v + 1`` (for values a softmax follows: a +1 there cancels)
        self._in_kernel = False
        self._helper = False

    @staticmethod
    def _stores(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                   and (c.func.attr == "store" or c.func.attr.startswith("atomic_")) for c in ast.walk(node))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        outer = (self._in_kernel, self._helper)
        jit = any("jit" in ast.unparse(d) for d in node.decorator_list) and self.only in (None, node.name)
        self._in_kernel = outer[0] or jit
        self._helper = jit and not self._stores(node)
        self.generic_visit(node)
        self._in_kernel, self._helper = outer
        return node

    def visit_Return(self, node: ast.Return) -> ast.Return:
        self.generic_visit(node)
        if self._helper and node.value is not None:
            node.value = self._changed(node.value)
            self.changed += 1
        return node

    def _changed(self, v: ast.expr) -> ast.expr:
        return ast.BinOp(v, ast.Mult(), ast.Constant(2)) if self.double else ast.BinOp(v, ast.Add(), ast.Constant(1))

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        f = node.func
        if (self._in_kernel and isinstance(f, ast.Attribute) and len(node.args) >= 2
                and (f.attr == "store" or f.attr.startswith("atomic_"))):
            node.args[1] = self._changed(node.args[1])
            self.changed += 1
        return node


def stores_changed(src: str, only: str | None = None, double: bool = False) -> tuple[str, int]:
    """``src`` with every value its kernels store (or its store-free helpers return) changed by +1 (``double``:
    times 2), and how many were changed; ``only``: in that ``@triton.jit`` function alone."""
    t = _ChangeStores(only, double)
    tree = ast.fix_missing_locations(t.visit(ast.parse(src)))
    return ast.unparse(tree), t.changed


def run_claiming_cuda(name: str, src: str, tasks: dict, tmp_path: Path, launches: _Launches) -> tuple[int, Any]:
    """(kernel launches, comparison with the reference) of solution source ``src`` of task ``name`` on inputs that
    claim to be on the GPU, at the task's reduced sizes."""
    sizes = {**SMALL[name], **INTERPRETED_SIZES.get(name, {})}
    task = shrunk(tasks[name], sizes)
    tmp_path.mkdir(parents=True, exist_ok=True)
    dev = torch.device("cpu")
    with torch.no_grad():
        reference, inputs, init_inputs = load_reference(task.source, tmp_path, 0, dev)
        cand_src, _ = shrink_source(src, sizes)
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

    def caught(changed_src: str, label: str) -> bool:
        try:
            _, cmp2 = run_claiming_cuda(name, changed_src, tasks, tmp_path / label, launches)
            return not cmp2.ok
        except Exception:  # noqa: BLE001 - a changed kernel that breaks the run is caught too
            return True

    if name in UNREACHED:
        assert not caught(changed_src, "changed"), (f"{key} is listed as unreached ({UNREACHED[name]}) but its "
                                                    "kernels now reach its output: take it off UNREACHED")
        return
    if name in SATURATED:
        assert caught(changed_src, "changed"), f"{key}: every kernel changed by +1 and the output still matched"
        return
    # each @triton.jit function on its own: +1 on what it stores (or returns), then x2 where a +1 can cancel (a
    # softmax is blind to a constant added to every logit of a row)
    missed = [fn for fn in jit_functions(src)
              if not caught(stores_changed(src, only=fn)[0], f"{fn}+1")
              and not caught(stores_changed(src, only=fn, double=True)[0], f"{fn}x2")]
    assert not missed, f"{key}: {missed} changed (+1, then x2) and the output still matched the reference"


def jit_functions(src: str) -> list[str]:
    """The names of ``src``'s ``@triton.jit`` functions, in file order."""
    names = [n.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)
             and any("jit" in ast.unparse(d) for d in n.decorator_list)]
    return list(dict.fromkeys(names))  # a name defined twice is one function (the last definition)


def _swin_v2_blocks(src: str, tasks: dict, tmp_path: Path, shift: int) -> tuple[Any, Any]:
    """The task's and solution ``src``'s ``SwinTransformerBlock`` at small sizes (16 channels, 8 x 8 tokens, 2 heads,
    4 x 4 windows, shifted by ``shift``), the reference's parameters randomised and shared with the solution's."""
    import sys

    from cudal1.harness.loading import load_task_copy
    from cudal1.harness.params import randomise_

    tmp_path.mkdir(parents=True, exist_ok=True)
    ref_mod = load_task_copy(tasks["30_SwinTransformerV2"].source, tmp_path, "ref")
    cand_mod = sys.modules[load_candidate(src, tmp_path).__module__]
    args = dict(dim=16, input_resolution=(8, 8), num_heads=2, window_size=4, shift_size=shift)
    torch.manual_seed(0)
    ref, cand = ref_mod.SwinTransformerBlock(**args).eval(), cand_mod.SwinTransformerBlock(**args).eval()
    randomise_(ref, 0)
    assert not share_parameters(ref, cand)
    return ref, cand


@pytest.mark.parametrize("shift", [0, 2])
def test_swin_v2_block_kernels_run_interpreted_and_a_changed_store_fails(shift, tasks, tmp_path, monkeypatch):
    """30_SwinTransformerV2 is too slow in the interpreter as a whole model (:data:`TOO_SLOW`): its three kernels
    (q, k, v in window layout; the relative-position bias with the shift mask; the residual layer norm) all live in
    ``SwinTransformerBlock``, run here on one small block against the task's, shifted and not; a +1 in the stores
    of any one of them fails (the bias's doubled: a softmax is blind to a +1 on every logit of a row)."""
    src = KERNEL_FILES["30_SwinTransformerV2"].read_text(encoding="utf-8")
    launches = _Launches(monkeypatch)
    x = torch.randn(1, 64, 16, generator=torch.Generator().manual_seed(1))  # one image: 4 windows of 16 tokens
    with torch.no_grad():
        ref, cand = _swin_v2_blocks(src, tasks, tmp_path / "as-is", shift)
        launches.n = 0
        got = _plain(cand(_claiming(x.clone())))
        assert launches.n == 4, launches.n  # q/k/v, bias, two residual layer norms
        cmp = compare_outputs(got, ref(x.clone()))
        assert cmp.ok, cmp.reason
        # each on its own; the bias doubled, since a softmax takes away a +1 added to every logit of a row
        for kernel in ("_qkv_windows_kernel", "_rel_bias_kernel", "_residual_ln_kernel"):
            changed_src, changed = stores_changed(src, only=kernel, double=kernel == "_rel_bias_kernel")
            assert changed >= 1, kernel
            ref2, cand2 = _swin_v2_blocks(changed_src, tasks, tmp_path / kernel, shift)
            cmp2 = compare_outputs(_plain(cand2(_claiming(x.clone()))), ref2(x.clone()))
            assert not cmp2.ok, f"{kernel}'s stored values changed by +1 and the block's output still matched"


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


def _changed_block(block: str, tmp_path: Path, only: str | None = None, double: bool = False) -> Any:
    """``cudal1.kernelzoo.blocks.<block>`` loaded from a copy whose kernels' stored values are changed by +1 (a
    file, so that Triton's interpreter can read the kernels' source; relative imports resolve in the package);
    ``only``, ``double``: as for :func:`stores_changed`."""
    import importlib.util

    src, changed = stores_changed((BLOCKS / f"{block}.py").read_text(encoding="utf-8"), only, double)
    assert changed > 0, f"blocks/{block}.py: nothing stored or returned in its kernels"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{block}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"cudal1.kernelzoo.blocks.{block}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: block kernels no solution of the set reaches at its reduced sizes, each run against PyTorch in the interpreter by
#: the block's own tests instead: (block, kernel) -> (that test file, what of the block it calls)
OWN_TESTS = {
    ("direct_conv", "softplus"): ("test_direct_conv_block.py", "softplus"),  # the set's Mish files use mish()
    ("small_conv", "_line_conv_kernel"): ("test_small_conv_block.py", "conv_transpose1d"),  # the set: depthwise only
    # reached only by 26_ShuffleNet, about 35 s in the interpreter: tested on its own below
    ("shufflenet", "_bn_relu_mean_kernel"): ("test_kernelbench_interpreted.py", "bn_relu_mean"),
}
BLOCK_KERNELS = [(b, fn) for b, users in sorted(BLOCK_USERS.items()) if users
                 for fn in jit_functions((BLOCKS / f"{b}.py").read_text(encoding="utf-8")) if (b, fn) not in OWN_TESTS]


def test_block_kernels_left_to_their_own_tests_are_there():
    for (block, kernel), (test_file, entry) in OWN_TESTS.items():
        assert kernel in jit_functions((BLOCKS / f"{block}.py").read_text(encoding="utf-8")), (block, kernel)
        text = (Path(__file__).parent / test_file).read_text(encoding="utf-8")
        assert f"{block}" in text and entry in text and "interpret" in text.lower(), (test_file, entry)


def _users_first(block: str, kernel: str) -> list[str]:
    """``block``'s users, those that call a host function of the block that launches ``kernel`` (or calls it, for a
    device helper) first: the others would run whole models in the interpreter for nothing."""
    tree = ast.parse((BLOCKS / f"{block}.py").read_text(encoding="utf-8"))
    hosts = {fn.name for fn in tree.body if isinstance(fn, ast.FunctionDef)
             and not any("jit" in ast.unparse(d) for d in fn.decorator_list)
             and any(isinstance(n, ast.Name) and n.id == kernel for n in ast.walk(fn))}
    users = BLOCK_USERS[block]
    return sorted(users, key=lambda k: not any(h in FILES[k].read_text(encoding="utf-8") for h in hosts))


@pytest.mark.parametrize("block, kernel", BLOCK_KERNELS, ids=[f"{b}.{fn}" for b, fn in BLOCK_KERNELS])
def test_a_changed_block_kernel_fails_a_solution_that_uses_it(block, kernel, tasks, tmp_path, monkeypatch):
    """blocks/ kernels (``bn_act``, ``densenet``, ``netvlad``, ``shufflenet`` have no tests of their own): with every
    value one of a block's ``@triton.jit`` functions stores (or returns) changed by +1, or else doubled, a solution
    of the set that imports the block no longer matches its reference."""
    import sys

    launches = _Launches(monkeypatch)
    tried = []
    for double in (False, True):
        monkeypatch.setitem(sys.modules, f"cudal1.kernelzoo.blocks.{block}",
                            _changed_block(block, tmp_path / f"x2-{double}", kernel, double))
        for key in _users_first(block, kernel):
            name = task_of(key)
            if missing_imports(tasks[name].source):
                continue
            tried.append(key)
            try:
                n, cmp = run_claiming_cuda(name, FILES[key].read_text(encoding="utf-8"), tasks,
                                           tmp_path / f"{key}-{double}", launches)
            except Exception:  # noqa: BLE001 - a changed kernel that breaks the run is caught too
                return
            if not cmp.ok:
                return
    pytest.fail(f"blocks/{block}.py: {kernel}'s stored values changed (+1, then x2) and every user still matched "
                f"its reference: {sorted(set(tried))}")


def test_shufflenet_bn_relu_mean_runs_interpreted_and_a_changed_store_fails(tmp_path, monkeypatch):
    """``blocks.shufflenet.bn_relu_mean`` (relu(bn(a)).mean((2, 3)), 26_ShuffleNet's head) against PyTorch on a small
    input that claims to be on the GPU; with its kernel's stores changed by +1 it no longer matches."""
    import torch.nn.functional as F

    from cudal1.kernelzoo.blocks import shufflenet

    gen = torch.Generator().manual_seed(3)
    bn = torch.nn.BatchNorm2d(5).eval()
    with torch.no_grad():
        for t in (bn.running_mean, bn.weight, bn.bias):
            t.copy_(torch.randn(5, generator=gen))
        bn.running_var.copy_(torch.rand(5, generator=gen) + 0.5)
    a = torch.randn(2, 5, 7, 9, generator=gen)
    want = F.relu(F.batch_norm(a, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)).mean((2, 3))
    launches = _Launches(monkeypatch)
    got = _plain(shufflenet.bn_relu_mean(_claiming(a), bn))
    assert launches.n == 1
    cmp = compare_outputs(got, want)
    assert cmp.ok, cmp.reason
    changed = _changed_block("shufflenet", tmp_path, "_bn_relu_mean_kernel")
    assert not compare_outputs(_plain(changed.bn_relu_mean(_claiming(a), bn)), want).ok

