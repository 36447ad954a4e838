"""Static and import-time checks of the built-in task suite (levels 1-3).

Fast and CPU-only: no task's forward pass is run and no full-size input is drawn.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import uuid
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

TASKS_DIR = Path(__file__).parents[2] / "packages/harness/src/cudal1/harness/builtin_tasks"
LEVELS = {"level1": 34, "level2": 22, "level3": 11}
MAX_INPUT_BYTES = 4 * 2**30  # any single input tensor (read-only reductions need 4 GiB to reach 1 ms)
MAX_TASK_BYTES = 6 * 2**30  # inputs + parameters/buffers + output of one call
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
CONSTANT_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _task_files() -> list[Path]:
    files = []
    for level in LEVELS:
        files += sorted((TASKS_DIR / level).glob("*.py"))
    return files


TASK_FILES = _task_files()


def _ids(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _top_level(tree: ast.Module) -> dict[str, ast.AST]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _load(path: Path):
    """Execute the task file as a fresh module that is not registered in sys.modules."""
    name = f"_cudal1_builtin_task_{path.stem}_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_level_folders_and_counts():
    for level, minimum in LEVELS.items():
        folder = TASKS_DIR / level
        assert folder.is_dir(), f"missing {folder}"
        assert not (folder / "__init__.py").exists(), f"{level} must not be a package"
        count = len(list(folder.glob("*.py")))
        assert count >= minimum, f"{level} has {count} tasks, needs at least {minimum}"


def test_task_names_unique_and_snake_case():
    stems = [p.stem for p in TASK_FILES]
    duplicates = sorted({s for s in stems if stems.count(s) > 1})
    assert not duplicates, f"task names used in more than one level: {duplicates}"
    for stem in stems:
        assert NAME_RE.match(stem), f"{stem!r} is not a snake_case name starting with a letter"


def test_sizes_table_lists_every_task():
    table = (TASKS_DIR / "SIZES.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("|")}
    missing = sorted(p.stem for p in TASK_FILES if p.stem not in rows)
    assert not missing, f"tasks missing from SIZES.md: {missing}"


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids)
def test_task_file_structure(path: Path):
    tree = _parse(path)
    doc = ast.get_docstring(tree)
    assert doc and doc.strip(), "task file needs a module docstring saying what it computes"
    assert "\n" not in doc.strip().split("\n\n")[0], "the docstring's summary must be one line"
    assert "float32" in doc, "the docstring must state the dtype"

    defs = _top_level(tree)
    assert isinstance(defs.get("Model"), ast.ClassDef), "no top-level class Model"
    for fn in ("get_inputs", "get_init_inputs"):
        assert isinstance(defs.get(fn), ast.FunctionDef), f"no top-level function {fn}"

    forward = [n for n in defs["Model"].body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
    assert forward, "Model has no forward method"

    # Module level holds only the docstring, imports, UPPERCASE constants, classes and functions.
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if isinstance(node, ast.Assign):
            for target in node.targets:
                assert isinstance(target, ast.Name) and CONSTANT_RE.match(target.id), (
                    f"line {node.lineno}: module-level assignments must be UPPERCASE constants"
                )
            assert not any(isinstance(n, ast.Call) for n in ast.walk(node.value)), (
                f"line {node.lineno}: module-level constants must not call anything"
            )
            continue
        pytest.fail(f"line {node.lineno}: unexpected module-level statement {type(node).__name__}")


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids)
def test_get_inputs_draws_signed_host_tensors(path: Path):
    fn = _top_level(_parse(path))["get_inputs"]
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            assert func.attr != "rand", (
                f"line {node.lineno}: torch.rand draws only positive values; use torch.randn"
            )
            assert func.attr not in ("cuda", "to"), (
                f"line {node.lineno}: get_inputs must not move tensors to a device"
            )
        for keyword in node.keywords:
            assert keyword.arg != "device", (
                f"line {node.lineno}: get_inputs must not pass device= (the harness sets it)"
            )


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids)
def test_import_creates_no_tensors_and_init_inputs_are_scalars(path: Path):
    module = _load(path)
    for name, value in vars(module).items():
        assert not isinstance(value, torch.Tensor), f"importing creates tensor {name}"
    assert isinstance(module.Model, type) and issubclass(module.Model, torch.nn.Module)
    assert callable(module.get_inputs) and callable(module.get_init_inputs)

    init_inputs = module.get_init_inputs()
    assert isinstance(init_inputs, list), "get_init_inputs() must return a list"
    for value in init_inputs:
        assert type(value) in (int, float, bool), (
            f"get_init_inputs() returned {type(value).__name__}; only plain scalars are allowed"
        )


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids)
def test_shapes_dtypes_and_memory_on_meta_device(path: Path):
    """Build the model and draw the inputs on the meta device (no storage, no real compute):
    float32 data, integer indices only, sizes within the memory caps, a tensor output."""
    module = _load(path)
    with torch.device("meta"):
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs()).eval()
        inputs = module.get_inputs()
    assert isinstance(inputs, list) and inputs, "get_inputs() must return a non-empty list"
    for i, x in enumerate(inputs):
        assert isinstance(x, torch.Tensor), f"input {i} is not a tensor"
        assert x.dtype in (torch.float32, torch.int64), f"input {i} has dtype {x.dtype}"
        assert _nbytes(x) <= MAX_INPUT_BYTES, f"input {i} has {_nbytes(x) / 2**30:.2f} GiB"
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        assert t.dtype in (torch.float32, torch.bool, torch.int64), f"{name} has dtype {t.dtype}"
    assert any(x.is_floating_point() for x in inputs) or any(
        p.is_floating_point() for p in model.parameters()
    ), "nothing floating-point to compute on"
    with torch.no_grad():
        out = model(*inputs)
    assert type(out) is torch.Tensor, f"forward returned {type(out).__name__}"
    assert out.dtype in (torch.float32, torch.int64), f"output dtype {out.dtype}"
    total = sum(_nbytes(x) for x in inputs) + _nbytes(out)
    total += sum(_nbytes(t) for t in model.parameters()) + sum(_nbytes(t) for t in model.buffers())
    assert total <= MAX_TASK_BYTES, f"inputs + parameters + output take {total / 2**30:.2f} GiB"
