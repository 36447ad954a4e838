"""Load task and candidate sources as separate, fresh module objects (inside a worker process).

Each load writes the source to a real file (so ``inspect.getsource``, Triton's ``@triton.jit`` and
tracebacks work) and executes it in a new module namespace. The reference and the inputs each get their
own copy of the task module; the candidate never shares a namespace with either, so a candidate that
rebinds a module constant (a size, a hyperparameter) changes nothing the harness uses.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import types
from pathlib import Path

_counter = itertools.count()


class CandidateLoadError(Exception):
    """The candidate source could not be loaded (syntax error, import failure, build failure, no ModelNew)."""


def load_source(source: str, workdir: Path, stem: str, *, keep_in_sys_modules: bool) -> types.ModuleType:
    """Write ``source`` to ``workdir/<stem>_<n>.py`` and execute it as a fresh module.

    ``keep_in_sys_modules``: candidates stay registered (dataclasses, pickling and Triton look modules up
    there); task copies are removed after execution so candidate code cannot find them by name.
    """
    name = f"cudal1_{stem}_{next(_counter)}"
    path = workdir / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if not keep_in_sys_modules:
            sys.modules.pop(name, None)
    return module


def load_task_copy(source: str, workdir: Path, role: str) -> types.ModuleType:
    """A pristine copy of the task module for one role (``ref`` or ``inputs``)."""
    mod = load_source(source, workdir, f"task_{role}", keep_in_sys_modules=False)
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, needed):
            raise AttributeError(f"task module does not define {needed}")
    return mod


def load_candidate(source: str, workdir: Path) -> type:
    """Execute the candidate source and return its ``ModelNew`` class.

    Raises:
        CandidateLoadError: with a one-line reason a person can act on.
    """
    try:
        compile(source, "candidate.py", "exec")
    except SyntaxError as e:
        raise CandidateLoadError(f"syntax error at line {e.lineno}: {e.msg}") from None
    try:
        mod = load_source(source, workdir, "candidate", keep_in_sys_modules=True)
    except BaseException as e:  # noqa: BLE001 - candidate code may raise anything, SystemExit included
        raise CandidateLoadError(f"importing the candidate failed: {type(e).__name__}: {_first_line(e)}") from e
    cls = getattr(mod, "ModelNew", None)
    if cls is None:
        raise CandidateLoadError("the candidate does not define ModelNew")
    if not isinstance(cls, type):
        raise CandidateLoadError(f"ModelNew is a {type(cls).__name__}, not a class")
    return cls


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    # build errors put the useful line last ("Error building extension 'x'")
    for ln in lines:
        if "Error building extension" in ln:
            return ln.strip()
    return lines[0].strip()[:500]
