"""Op menus: the ops a ``ModelNew`` may import, shown in the prompt when a policy's action space is a kernel
library's ops instead of free-form CUDA or Triton (issue 42: a 135M policy can compose ops; it cannot write a
kernel from nothing).

A menu is a JSON document an installed package names through the entry-point group ``cudal1.op_menus`` (the kernel
zoo's is ``kernelzoo``, :mod:`cudal1.kernelzoo.menu`)::

    {"source": {"page": ..., "gpu": ..., "date": ..., "baseline": "eager"},
     "ops": [{"name", "import", "signature", "summary", "measured": [{"task", "speedup", "ci"}]}]}

:func:`render_menu` turns the chosen ops into the prompt's lines: the import, the signature, what it computes and
where it was measured faster than the baseline (or that it was not), so the policy can pick an op for the task.

Example:
    >>> m = Menu(ops=(MenuOp("relu", "from z import relu", "relu(x)", "ReLU", ({"task": "relu", "speedup": 1.5,
    ...          "ci": [1.4, 1.6]},)),), source={"gpu": "GPU", "date": "2026-11-23", "baseline": "eager"})
    >>> print(render_menu(m))
    Speedups are over PyTorch eager (GPU, 2026-11-23). Import an op as `from z import <op>`.
    - `relu(x)`: ReLU; faster on relu 1.50x.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MENU_GROUP", "Menu", "MenuError", "MenuOp", "installed_menus", "load_menu", "names_imported_from",
           "read_menu", "render_menu"]

MENU_GROUP = "cudal1.op_menus"  # entry-point group: menu name -> callable returning the menu's JSON file


class MenuError(ValueError):
    """A menu that is not installed or not readable, or that lacks an op asked for (the message says which exist)."""


@dataclass(frozen=True)
class MenuOp:
    """One op on a menu.

    Attributes:
        name: the op's name (``softmax``).
        imports: the import line a ``ModelNew`` writes (``from cudal1.kernelzoo import softmax``).
        signature: the call without annotations (``softmax(x)``).
        summary: what it computes, one line.
        measured: ``{"task", "speedup", "ci"}`` of released solutions using it (speedup over the menu's baseline,
            x, with its 95% interval), fastest first; empty when none was measured.
    """

    name: str
    imports: str
    signature: str
    summary: str
    measured: tuple[dict[str, Any], ...] = ()

    def evidence(self, most: int = 2, *, task_names: bool = True) -> str:
        """Where it was measured faster (interval above 1), else that it was not, or not measured: a phrase.
        With ``task_names`` false the figures stand without the tasks' names (``faster: 1.20x where measured``):
        a task name such as ``conv2d`` reads like an op a small policy then imports."""
        if not self.measured:
            return "not measured in a task"
        faster = [m for m in self.measured if m["ci"][0] > 1.0]
        shown = (faster or self.measured)[:most]
        verdict = "faster" if faster else "not faster"
        if not task_names:
            figures = ", ".join(f"{m['speedup']:.2f}x" for m in shown)
            return f"{verdict}: {figures} where measured"
        tasks = ", ".join(f"{m['task']} {m['speedup']:.2f}x" for m in shown)
        return f"{verdict} on {tasks}"


@dataclass(frozen=True)
class Menu:
    """A menu's ops (in its order) and where their measurements come from (``page``, ``gpu``, ``date``,
    ``baseline``)."""

    ops: tuple[MenuOp, ...]
    source: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def names(self) -> list[str]:
        return [o.name for o in self.ops]

    def select(self, names: Sequence[str]) -> Menu:
        """The menu with only ``names`` (in the order given). Raises MenuError naming every unknown op and the
        ops the menu has."""
        have = {o.name: o for o in self.ops}
        unknown = [n for n in names if n not in have]
        if unknown:
            raise MenuError(f"the {self.name or 'op'} menu has no op {unknown}; it has: {', '.join(have)}")
        return Menu(ops=tuple(have[n] for n in names), source=self.source, name=self.name)


def names_imported_from(code: str, library: str) -> set[str]:
    """The names ``code`` imports (``from X import name``) from ``library`` or one of its modules (``cudal1.kernelzoo``,
    ``cudal1.kernelzoo.ops.bias_act``); none for code that does not parse."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            and ((n.module or "") == library or (n.module or "").startswith(library + ".")) for a in n.names}


def read_menu(path: str | Path, name: str = "") -> Menu:
    """The menu in JSON file ``path``. Raises MenuError when it is missing or malformed."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        ops = tuple(MenuOp(name=o["name"], imports=o["import"], signature=o["signature"], summary=o["summary"],
                           measured=tuple(o.get("measured", ()))) for o in doc["ops"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise MenuError(f"menu file {path} is not a readable op menu ({type(e).__name__}: {e}); reinstall the "
                        "package that provides it") from e
    return Menu(ops=ops, source=dict(doc.get("source", {})), name=name)


def installed_menus() -> dict[str, Any]:
    """Installed menus by name (entry points of group ``cudal1.op_menus``, e.g. ``kernelzoo``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=MENU_GROUP)}


def load_menu(name: str) -> Menu:
    """The installed menu ``name``. Raises MenuError naming the installed menus when there is none of that name."""
    menus = installed_menus()
    if name not in menus:
        have = ", ".join(sorted(menus)) or "none"
        raise MenuError(f"no op menu {name!r} is installed (installed: {have}); the kernel zoo's menu comes with "
                        "`pip install cudal1-kernelzoo`")
    return read_menu(Path(menus[name].load()()), name=name)


def _first_clause(text: str) -> str:
    """``text`` up to its first ``; `` outside brackets and code spans (all of it when there is none)."""
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif not code and ch in "([":
            depth += 1
        elif not code and ch in ")]":
            depth = max(0, depth - 1)
        elif ch == ";" and not code and depth == 0 and text[i + 1:i + 2] == " ":
            return text[:i]
    return text


def _short(summary: str, most: int) -> str:
    """``summary`` in at most ``most`` characters: its first clause (up to ``;``) when that fits, else cut at a
    word with `` ...``; a code span the cut opened is closed."""
    text = summary.rstrip(". ")
    if len(text) <= most:
        return text
    first = _first_clause(text)
    if len(first) <= most:
        return first
    cut = text[:most].rsplit(" ", 1)[0].rstrip(",;: ")
    return cut + ("`" if cut.count("`") % 2 else "") + " ..."


def render_menu(menu: Menu, summary_chars: int = 110, *, task_names: bool = True, closed: bool = False) -> str:
    """The menu's text for a prompt: where the speedups were measured, the import line (once when every op is
    imported from one module), then one line per op: signature, what it computes (cut to ``summary_chars``),
    where it was measured faster or that it was not (with the tasks' names when ``task_names``). With ``closed``
    a last line lists every op the menu has and says that nothing else is there to import.

    Example:
        >>> m = Menu(ops=(MenuOp("relu", "from z import relu", "relu(x)", "ReLU", ({"task": "relu_big",
        ...          "speedup": 1.5, "ci": [1.4, 1.6]},)),), source={"baseline": "eager"})
        >>> print(render_menu(m, task_names=False, closed=True))
        Speedups are over PyTorch eager. Import an op as `from z import <op>`.
        - `relu(x)`: ReLU; faster: 1.50x where measured.
        These are all the ops there are to import: relu. Write anything else with torch.
    """
    src = menu.source
    where = ", ".join(str(src[k]) for k in ("gpu", "date") if src.get(k))
    head = f"Speedups are over PyTorch {src.get('baseline', 'eager')}" + (f" ({where})." if where else ".")
    modules = {op.imports.rsplit(" import ", 1)[0] for op in menu.ops}
    shared = len(modules) == 1 and all(op.imports.endswith(f" import {op.name}") for op in menu.ops)
    if shared:
        head += f" Import an op as `{next(iter(modules))} import <op>`."
    lines = [head]
    for op in menu.ops:
        line = f"- `{op.signature}`: {_short(op.summary, summary_chars)}; {op.evidence(task_names=task_names)}."
        lines.append(line if shared else f"{line} `{op.imports}`")
    if closed:
        lines.append(f"These are all the ops there are to import: {', '.join(menu.names())}. "
                     "Write anything else with torch.")
    return "\n".join(lines)
