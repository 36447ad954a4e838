"""The policy's action space: what a ``ModelNew`` it writes is made of, named in the recipe and in every report.

* ``free``: free-form code, custom CUDA through ``load_inline``, Triton kernels or PyTorch rewrites (the prompts
  as they are; the default, and the space for large models).
* ``zoo``: compose an op menu's ops (:mod:`cudal1.prompts.menu`; the kernel zoo's ``kernelzoo`` menu by default)
  and PyTorch rewrites. Every prompt (SFT seed examples, self-training, GRPO, the evaluation stage, the search)
  carries the menu: the chosen ops with their signatures and where each was measured faster. For a 135M policy
  that cannot write a kernel from nothing (issue 42, item 2).

Example:
    >>> menu_text(ActionSpaceSection())
    ''
    >>> describe(ActionSpaceSection(name="zoo", ops=["softmax", "layer_norm"]))
    'zoo (menu kernelzoo, closed form: softmax, layer_norm)'
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = ["MENU_FORMS", "SPACES", "ActionSpaceSection", "check", "describe", "menu_imports", "menu_text", "off_menu"]

#: action space name -> what a completion in it is made of
SPACES: dict[str, str] = {
    "free": "free-form code: CUDA through load_inline, Triton kernels or PyTorch rewrites",
    "zoo": "composition of an op menu's ops and PyTorch rewrites",
}


@dataclass
class ActionSpaceSection:
    """What the policy's code is made of (:mod:`cudal1.policy.action_space`): ``name`` ``free`` (free-form CUDA,
    Triton or PyTorch) or ``zoo`` (compose the op menu ``menu``'s ops, every prompt carrying the menu); ``ops``: the
    menu's ops to show (every op when empty; a small policy's prompt budget holds a dozen or so); ``menu_form``: how the
    menu is written (:data:`MENU_FORMS`)."""

    name: str = "free"
    menu: str = "kernelzoo"
    ops: list[str] = field(default_factory=list)
    menu_form: str = "closed"


#: menu_form -> how the zoo space's menu is written (issue 42, item 6)
MENU_FORMS: dict[str, str] = {
    "closed": "each op's measured figures without the tasks' names, and a last line listing every op there is",
    "tasks": "each op's measured figures with the tasks' names (attempt 2; a task named conv2d read as an op)",
}


def check(section: ActionSpaceSection) -> None:
    """Refuse an unknown space, ops without a menu space, an uninstalled menu or an op the menu lacks (ValueError
    subclasses whose message says what exists)."""
    if section.name not in SPACES:
        raise ValueError(f"action_space.name {section.name!r}: write one of {', '.join(SPACES)}")
    if section.name == "free" and section.ops:
        raise ValueError("action_space.ops names menu ops, which only the zoo space shows: set action_space.name: "
                         "zoo, or remove the ops")
    if section.menu_form not in MENU_FORMS:
        raise ValueError(f"action_space.menu_form {section.menu_form!r}: write one of {', '.join(MENU_FORMS)}")
    if section.name == "zoo":
        menu_text(section)


def menu_text(section: ActionSpaceSection) -> str:
    """The menu text every prompt of the recipe carries: empty for ``free``; for ``zoo`` the menu's chosen ops
    (all when ``ops`` is empty). Raises :class:`cudal1.prompts.MenuError` for an uninstalled menu or unknown op."""
    if section.name != "zoo":
        return ""
    from cudal1.prompts.menu import render_menu

    menu = _installed(section.menu)
    closed = section.menu_form == "closed"
    return render_menu(menu.select(section.ops) if section.ops else menu, task_names=not closed, closed=closed)


@cache
def _installed(name: str) -> Any:
    """The installed menu ``name`` (:func:`cudal1.prompts.menu.load_menu`), read once per process: every prompt of
    every stage carries it, and the seed data asks once per released solution."""
    from cudal1.prompts.menu import load_menu

    return load_menu(name)


@cache
def _import_forms(name: str) -> tuple[dict[str, str], frozenset[str]]:
    """Of installed menu ``name``: op -> the ``from X`` part of its import line, and the libraries those lines import
    from (``from cudal1.kernelzoo import x`` -> ``cudal1.kernelzoo``)."""
    ops = _installed(name).ops
    return ({op.name: op.imports.rsplit(" import ", 1)[0] for op in ops},
            frozenset(op.imports.split()[1] for op in ops))


def off_menu(code: str, section: ActionSpaceSection) -> list[str]:
    """Names ``code`` imports from the menu's library (the module of its import lines, e.g. ``cudal1.kernelzoo``, or
    one of its modules) that the recipe's menu does not show, sorted; empty for the free space or code that does not
    parse. A seed answer using such an op would teach a call the prompt never offers."""
    if section.name != "zoo":
        return []
    from cudal1.prompts.menu import names_imported_from

    shown = set(section.ops or _installed(section.menu).names())
    libraries = _import_forms(section.menu)[1]
    return sorted(set().union(*(names_imported_from(code, lib) for lib in libraries)) - shown)


def menu_imports(code: str, section: ActionSpaceSection) -> str:
    """``code`` with every module-level import of menu ops from one of the library's modules written the way the menu
    writes it: ``from cudal1.kernelzoo.ops.log_softmax import log_softmax`` becomes ``from cudal1.kernelzoo import
    log_softmax``. The rest of the text is left as it is; a statement that also imports a name the menu does not
    hold, renames one (``as``) or shares a line with other code, and code that does not parse are left as they are;
    the free space changes nothing.

    Why (issue 42, item 6, attempt 2): the menu in every prompt says ``from cudal1.kernelzoo import <op>`` while the
    seed answers, released solutions, import from each op's module; a policy trained on them invented module names
    (``cudal1.kernelzoo.ops.conv2d``) for ops whose module it never saw. One import form leaves none to invent."""
    if section.name != "zoo":
        return code
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    home, libraries = _import_forms(section.menu)  # op -> "from cudal1.kernelzoo"; {"cudal1.kernelzoo"}
    lines = code.splitlines(keepends=True)
    for node in reversed(tree.body):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                and node.module not in libraries and any(node.module.startswith(lib + ".") for lib in libraries)):
            continue
        if not all(a.asname is None and a.name in home for a in node.names):
            continue
        end = node.end_lineno or node.lineno
        if node.col_offset or lines[end - 1][node.end_col_offset or 0:].strip():  # shares a line with other code
            continue
        by_home: dict[str, list[str]] = {}
        for a in node.names:
            by_home.setdefault(home[a.name], []).append(a.name)
        new = "".join(f"{h} import {', '.join(names)}\n" for h, names in by_home.items())
        lines[node.lineno - 1:end] = [new]
    return "".join(lines)


def describe(section: ActionSpaceSection) -> str:
    """One line naming the space, for summaries and result tables: ``free`` or ``zoo (menu kernelzoo, closed form: ...)``."""
    if section.name != "zoo":
        return section.name
    return (f"zoo (menu {section.menu}, {section.menu_form} form: "
            f"{', '.join(section.ops) if section.ops else 'every op'})")
