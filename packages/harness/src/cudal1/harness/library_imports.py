"""Whether a source's top-level imports ask an installed kernel library for a module or a name it does not have,
answered in the parent by reading the library's files: nothing of the candidate or of the library runs.

A policy composing a kernel library's ops often imports ops the library does not have (``from cudal1.kernelzoo
import conv2d``): 29 of 35 compile errors of one H100 learning run (benchmarks/results/2026-12-05-learning-h100.md),
103 of the 280 pairs seed 0 of the learning experiment evaluated. The worker would end each such pair
``compile_error`` with Python's ``ImportError`` after starting, importing torch and loading the task (0.78 s median
on an H100 with warm spares); this answers the same in microseconds, before any worker or reference.

Only what the worker would certainly fail is answered here; everything else is left to it:

- only import statements at the top level of the source (not inside ``try``, ``if`` or a function, where a
  fallback or a later call decides what happens), of a kernel library registered in the entry-point group
  :data:`cudal1.harness.static_checks.KERNEL_LIBRARY_GROUP`, or of a module of its namespace package (``cudal1``:
  for those, only whether the module exists, as ``cudal1.kernelzao`` or ``cudal1.linear`` does not);
- a name counts as there when the module's file binds it anywhere at its top level (also inside ``if`` / ``try``
  blocks), or, for a package, when a submodule of that name exists; a module whose names cannot be read without
  running it (a module-level ``__getattr__``, a star import, ``globals()``) is never judged.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .static_checks import kernel_libraries, module_location
from .syntax import syntax_problem


def _is_namespace(top: str) -> bool:
    """Whether top-level package ``top`` is a namespace package (portions on the file system, no ``__init__`` that
    could add modules at run time), such as ``cudal1``."""
    found = module_location(top)
    return found is not None and found[1] and not any((d / "__init__.py").is_file() for d in found[0])


_TRY_STAR = getattr(ast, "TryStar", ast.Try)  # ``try: ... except* ...`` (Python 3.11+)


def _bound_names(stmts: list[ast.stmt]) -> set[str] | None:
    """Names the statements bind at module level (descending into ``if`` / ``try`` / ``with`` / ``for`` blocks, not
    into functions or classes); None when that cannot be told without running them."""
    names: set[str] = set()
    for node in stmts:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None
            names.add(node.name)
        elif isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if any(a.name == "*" for a in node.names):
                return None
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With,
                               ast.AsyncWith)):
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [i.optional_vars for i in node.items if i.optional_vars] if isinstance(node, (ast.With, ast.AsyncWith))
                       else [node.target])
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if isinstance(node, ast.Match):  # its cases bind names by patterns: not read here
            return None
        if isinstance(node, (ast.If, ast.Try, _TRY_STAR, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
            blocks += [h.body for h in getattr(node, "handlers", [])]
            for block in blocks:
                inner = _bound_names(block)
                if inner is None:
                    return None
                names |= inner
    return names


def _module_names(paths: list[Path], is_package: bool) -> set[str] | None:
    """What ``from <module> import NAME`` finds in the module at ``paths`` (:func:`module_location`): the names its
    file binds and, for a package, its submodules; None when that cannot be told without running it."""
    names: set[str] = set()
    files = [d / "__init__.py" for d in paths if (d / "__init__.py").is_file()][:1] if is_package else paths[:1]
    for path in files:
        try:
            source = path.read_text(encoding="utf-8", errors="replace")
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError, RecursionError):
            return None
        if "globals()" in source or "exec(" in source:  # names bound at run time
            return None
        bound = _bound_names(tree.body)
        if bound is None:
            return None
        names |= bound
    if is_package:
        for folder in paths:
            names.update(p.stem for p in folder.glob("*.py"))
            names.update(p.name for p in folder.iterdir() if p.is_dir())
    return names


def library_import_problem(source: str) -> str:
    """``"cannot import name 'X' from 'LIB' (...)"`` (or ``"no module named 'LIB.M'"``) for the first top-level
    import of ``source`` that asks an installed kernel library for something it does not have, else ``""``. The
    worker would end the pair ``compile_error`` with the same ``ImportError``; nothing runs here."""
    libs = kernel_libraries()
    if not libs:
        return ""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""  # the syntax check answers that
    ours = lambda m: any(m == lib or m.startswith(lib + ".") for lib in libs)  # noqa: E731
    spaces = {root for lib in libs if "." in lib and _is_namespace(root := lib.split(".")[0])}
    in_space = lambda m: m.split(".")[0] in spaces and "." in m  # noqa: E731 - cudal1.<anything>
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if (ours(a.name) or in_space(a.name)) and module_location(a.name) is None:
                    return f"no module named {a.name!r}: the installed packages have no such module"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (ours(node.module)
                                                                                      or in_space(node.module)):
            found = module_location(node.module)
            if found is None:
                return f"no module named {node.module!r}: the installed packages have no such module"
            if not ours(node.module):
                continue  # another package of the namespace: only whether the module exists is judged
            names = _module_names(*found)
            if names is None:
                continue
            for a in node.names:
                if a.name != "*" and a.name not in names:
                    return (f"cannot import name {a.name!r} from {node.module!r}: the installed kernel library has "
                            "no such name (its ops are listed in its __init__)")
    return ""


def parent_problem(source: str) -> str:
    """What the parent answers ``compile_error`` itself, with no worker or reference: a syntax error
    (:func:`cudal1.harness.syntax.syntax_problem`), else a top-level import a kernel library cannot answer
    (:func:`library_import_problem`); ``""`` when neither. The pool's verdict and the build stage's choice of what to
    build both ask this, so they agree on it."""
    return syntax_problem(source) or library_import_problem(source)


__all__ = ["library_import_problem", "parent_problem"]
