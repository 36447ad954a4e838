"""Task suites: ``builtin``, ``builtin:levelN``, ``kernelbench:PATH`` and ``dir:PATH``.

A task is one Python file in the KernelBench format: ``class Model(nn.Module)``, ``get_inputs()``,
``get_init_inputs()`` and module-level sizes. Loading a suite reads files and checks them statically
(AST); it never imports them into this process. A file that cannot be read, does not parse or lacks one
of the three names is a :class:`TaskProblem`, reported by name, and the rest of the suite still loads.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from .types import Candidate, Task

BUILTIN_DIR = Path(__file__).parent / "builtin_tasks"
REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")


class SuiteError(ValueError):
    """A suite spec that cannot be loaded at all (bad spec, missing folder, duplicate task names)."""


@dataclass(frozen=True)
class TaskProblem:
    """A task file that could not become a :class:`Task`, and why."""

    name: str
    path: str
    reason: str


@dataclass(frozen=True)
class SuiteLoad:
    """What loading a suite spec produced: usable tasks and the files that were not."""

    spec: str
    tasks: list[Task] = field(default_factory=list)
    problems: list[TaskProblem] = field(default_factory=list)


def _module_names(tree: ast.Module) -> dict[str, str]:
    """Names bound at module level -> how: ``class``, ``def``, ``assign`` or ``import``."""
    defined: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            defined[node.name] = "class"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = "def"
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    defined[t.id] = "assign"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                defined[(a.asname or a.name).split(".")[0]] = "import"
    return defined


def missing_names(source: str) -> list[str]:
    """Names among ``Model``, ``get_inputs``, ``get_init_inputs`` that the source does not define at
    module level. Raises SyntaxError if the source does not parse."""
    defined = _module_names(ast.parse(source))
    return [n for n in REQUIRED_NAMES if n not in defined]


def read_task_file(path: Path, *, level: int | None, suite: str) -> Task | TaskProblem:
    """Read one task file; return a Task, or a TaskProblem saying what is wrong with it."""
    name = path.stem
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return TaskProblem(name, str(path), f"cannot read file: {e}")
    try:
        missing = missing_names(source)
    except SyntaxError as e:
        return TaskProblem(name, str(path), f"syntax error at line {e.lineno}: {e.msg}")
    if missing:
        return TaskProblem(name, str(path), f"task file does not define {', '.join(missing)}")
    return Task(name=name, source=source, level=level, suite=suite, path=str(path))


def _task_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if p.is_file() and not p.name.startswith("_"))


def _level_of(folder_name: str) -> int | None:
    m = re.fullmatch(r"level_?(\d+)", folder_name)
    return int(m.group(1)) if m else None


def _load_folders(spec: str, folders: list[tuple[Path, int | None]]) -> SuiteLoad:
    load = SuiteLoad(spec=spec)
    seen: dict[str, str] = {}
    for folder, level in folders:
        for path in _task_files(folder):
            item = read_task_file(path, level=level, suite=spec)
            if item.name in seen:
                raise SuiteError(
                    f"task name {item.name!r} appears twice in suite {spec!r} ({seen[item.name]} and {path}); "
                    "task names are file stems and must be unique"
                )
            seen[item.name] = str(path)
            (load.tasks if isinstance(item, Task) else load.problems).append(item)
    return load


def load_suite_report(spec: str) -> SuiteLoad:
    """Load a suite spec, keeping problem files as :class:`TaskProblem` entries.

    Specs:
        ``builtin``: every built-in task (levels 1-3, shipped in this package);
        ``builtin:level1`` (or ``level2``, ``level3``): one level;
        ``kernelbench:PATH``: a KernelBench checkout: ``PATH/level1`` .. ``PATH/level4`` as found
        (``PATH/KernelBench/levelN`` is also accepted);
        ``dir:PATH``: every ``*.py`` task file in one folder.

    Raises:
        SuiteError: unknown spec, missing folder, no task folders, duplicate task names.
    """
    kind, _, arg = spec.partition(":")
    if kind == "builtin":
        if arg and not re.fullmatch(r"level[123]", arg):
            raise SuiteError(f"unknown built-in level {arg!r}; use builtin, builtin:level1, builtin:level2 or builtin:level3")
        levels = [int(arg[-1])] if arg else [1, 2, 3]
        return _load_folders(spec, [(BUILTIN_DIR / f"level{n}", n) for n in levels])
    if kind == "kernelbench":
        root = _existing_dir(arg, spec)
        if not any((root / f"level{n}").is_dir() for n in range(1, 5)) and (root / "KernelBench").is_dir():
            root = root / "KernelBench"
        folders = [(root / f"level{n}", n) for n in range(1, 5) if (root / f"level{n}").is_dir()]
        if not folders:
            raise SuiteError(f"{root} has no level1..level4 folders; is it a KernelBench checkout?")
        return _load_folders(spec, folders)
    if kind == "dir":
        return _load_folders(spec, [(_existing_dir(arg, spec), None)])
    raise SuiteError(f"unknown suite spec {spec!r}; use builtin, builtin:levelN, kernelbench:PATH or dir:PATH")


def _existing_dir(arg: str, spec: str) -> Path:
    if not arg:
        raise SuiteError(f"suite spec {spec!r} needs a path after the colon")
    p = Path(arg).expanduser()
    if not p.is_dir():
        raise SuiteError(f"suite folder {p} does not exist (from spec {spec!r})")
    return p


def load_suite(spec: str) -> list[Task]:
    """Load a suite spec and return its usable tasks, sorted by level then name.

    Files with problems are left out; use :func:`load_suite_report` to see them.
    """
    return load_suite_report(spec).tasks


def _rename_class(source: str, old: str, new: str) -> str:
    """``source`` with every NAME token ``old`` replaced by ``new`` (tokens, not text: strings, comments and
    longer names are left alone), edited in place so that the layout is kept."""
    import io
    import tokenize

    lines = source.splitlines(keepends=True)
    hits = [t.start for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.NAME and t.string == old]
    for row, col in reversed(hits):  # right to left: earlier columns stay valid
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[col + len(old):]
    return "".join(lines)


def task_from_module(path: str | Path, class_name: str, *, inputs_fn: str = "get_inputs",
                     init_inputs_fn: str | None = None, name: str | None = None) -> Task:
    """A :class:`Task` from a user's own module: the file at ``path`` defines ``class_name`` (an
    ``nn.Module``), a function ``inputs_fn`` returning a list of example inputs for ``forward``, and
    optionally a function returning the constructor's arguments: ``init_inputs_fn``, or when that is None,
    ``get_init_inputs`` if the file defines it, else no arguments.

    The task source is the file's source with ``class_name`` renamed ``Model`` (NAME tokens, so
    ``super(Net, self)`` follows) and the KernelBench names appended as aliases where they differ
    (``get_inputs = example_inputs``; ``def get_init_inputs(): return []``). The file must be
    self-contained (imports of installed packages only): the harness runs a copy of it in a worker.
    The task is named ``name``, by default ``<file stem>_<class_name>``; its suite is ``module:PATH``.

    Raises:
        SuiteError: unreadable file, syntax error, no such class (defined in the file, not imported), no
            such function, or the name ``Model`` already used for something else.
    """
    p = Path(path).expanduser()
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"cannot read module file {p}: {e}") from e
    try:
        defined = _module_names(ast.parse(source))
    except SyntaxError as e:
        raise SuiteError(f"{p}: syntax error at line {e.lineno}: {e.msg}") from e
    if defined.get(class_name) != "class":
        classes = sorted(n for n, how in defined.items() if how == "class")
        how = defined.get(class_name)
        why = (f"{class_name} is bound by an {how} there, not defined as a class; the harness runs a copy of "
               "this file elsewhere, so the class must be defined in it" if how else
               f"it defines no class {class_name} at module level")
        raise SuiteError(f"{p}: {why} (classes found: {', '.join(classes) or 'none'}); name the nn.Module "
                         "class to optimize")
    for fn, role, explicit in ((inputs_fn, "returning the example inputs of forward (a list)", True),
                               (init_inputs_fn or "get_init_inputs", "returning the constructor's arguments",
                                init_inputs_fn is not None)):
        if explicit and defined.get(fn) in (None, "class"):
            raise SuiteError(f"{p} defines no function {fn}() {role}; define it at module level, or name "
                             "the function that does")
    if class_name != "Model":
        import io
        import tokenize

        if any(t.type == tokenize.NAME and t.string == "Model"
               for t in tokenize.generate_tokens(io.StringIO(source).readline)):
            raise SuiteError(f"{p} already uses the name Model; {class_name} becomes the task's Model, so rename "
                             "the other Model (or name your class Model)")
        source = _rename_class(source, class_name, "Model")
    adapter = []
    if inputs_fn != "get_inputs":
        adapter.append(f"get_inputs = {inputs_fn}")
    if init_inputs_fn is not None and init_inputs_fn != "get_init_inputs":
        adapter.append(f"get_init_inputs = {init_inputs_fn}")
    elif init_inputs_fn is None and defined.get("get_init_inputs") in (None, "class"):
        adapter.append("def get_init_inputs():\n    return []")
    if adapter:
        source = (source.rstrip("\n") + f"\n\n\n# added by cudal1 (task_from_module): the KernelBench names for "
                  f"{class_name}\n" + "\n".join(adapter) + "\n")
    missing = missing_names(source)
    if missing:  # pragma: no cover - the checks above leave none
        raise SuiteError(f"{p}: the task made from it lacks {', '.join(missing)}")
    return Task(name=name or f"{p.stem}_{class_name}", source=source, suite=f"module:{p}", path=str(p))


def reference_candidate(task: Task) -> Candidate:
    """The task's own reference submitted as a candidate: its source with the name ``Model`` renamed to
    ``ModelNew`` everywhere (tokens, not text, so ``super(Model, self)`` follows). Its speedup must be ~1.
    """
    import io
    import tokenize

    toks = list(tokenize.generate_tokens(io.StringIO(task.source).readline))
    renamed = [t._replace(string="ModelNew") if t.type == tokenize.NAME and t.string == "Model" else t for t in toks]
    source = tokenize.untokenize(renamed)
    return Candidate(source=source, task=task.name, origin="reference")
