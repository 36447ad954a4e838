"""The zoo's op menu: what a policy may call when its action space is the zoo's ops (issue 42).

A small policy cannot write a fast Triton kernel from nothing, but it can compose ops that exist. The menu lists
each public op of :mod:`cudal1.kernelzoo` with its import line, its signature (without annotations), one line
saying what it computes, and the built-in tasks where a released solution using it was measured against PyTorch
eager (speedup and its 95% interval, with the GPU and date of the measurement). The data lives in ``menu.json``
beside this module, written by ``benchmarks/scripts/zoo_menu.py`` from the zoo's signatures and a committed results
store; reading it (:func:`menu_file`, the ``cudal1.op_menus`` entry point ``kernelzoo``) imports no torch or
Triton. Prompts render it with :mod:`cudal1.prompts.menu`.

Example:
    >>> import json
    >>> data = json.loads(menu_file().read_text())
    >>> "softmax" in {op["name"] for op in data["ops"]}
    True
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MENU_FILE", "build_menu", "menu_file", "menu_op_names"]

MENU_FILE = Path(__file__).resolve().parent / "menu.json"

#: public names of ``cudal1.kernelzoo`` that are not ops a ``ModelNew`` calls per forward
NOT_ON_MENU = frozenset({"patch", "PatchReport", "rotary_tables"})


def menu_file() -> Path:
    """The menu's JSON file (the ``cudal1.op_menus`` entry point ``kernelzoo``)."""
    return MENU_FILE


def menu_op_names() -> list[str]:
    """Names of the public functions of :mod:`cudal1.kernelzoo` that belong on the menu: every op but the PyTorch
    references (``*_ref``), the module classes and :data:`NOT_ON_MENU`. Imports the zoo (torch, Triton)."""
    import cudal1.kernelzoo as zoo

    return [n for n in zoo.__all__ if not n.endswith("_ref") and n not in NOT_ON_MENU
            and inspect.isfunction(getattr(zoo, n))]


def _plain_signature(name: str, fn: Any) -> str:
    """``name(a, b, *, eps=1e-05)``: the parameters without annotations, as a caller writes them."""
    sig = inspect.signature(fn)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return f"{name}{sig.replace(parameters=params, return_annotation=inspect.Signature.empty)}"


def _first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a docstring on one line, reST double backticks as single ones, at most ``limit``
    characters (cut at a word)."""
    flat = " ".join(text.split()).replace("``", "`")
    flat = re.sub(r"\s*\([^()]*on CUDA[^()]*\)", "", flat)  # where it runs is the same for every op
    flat = re.sub(r";\s*`torch\.ops\.cudal1\.\w+`", "", flat).replace(":func:", "")
    m = re.search(r"(?<!e\.g\.)(?<!i\.e\.)(?<=\.)\s", flat)
    line = flat[: m.start()] if m else flat
    line = line.rstrip(".;: ")
    if len(line) > limit:
        line = line[:limit].rsplit(" ", 1)[0] + " ..."
    return line


def _summary(name: str, fn: Any) -> str:
    """What op ``name`` computes: the first sentence of its docstring, else of its module ``ops.<name>``'s (the
    elementwise ops are made by one factory and carry no docstring of their own)."""
    import importlib

    doc = inspect.getdoc(fn) or ""
    if not doc.strip():
        try:
            doc = inspect.getdoc(importlib.import_module(f"cudal1.kernelzoo.ops.{name}")) or ""
        except ImportError:
            doc = inspect.getdoc(inspect.getmodule(fn)) or ""
    return _first_sentence(doc)


def build_menu(measured: Mapping[str, list[dict[str, Any]]], source: Mapping[str, Any]) -> dict[str, Any]:
    """The menu's JSON document.

    Args:
        measured: op name -> measurements of released solutions that import it, each ``{"task": name,
            "speedup": x, "ci": [lo, hi]}`` (speedup over ``source["baseline"]``).
        source: where the measurements come from: ``page`` (results page), ``gpu``, ``date``, ``baseline``.
    Returns:
        ``{"source": ..., "ops": [{"name", "import", "signature", "summary", "measured"}, ...]}`` in the zoo's
        ``__all__`` order.
    """
    import cudal1.kernelzoo as zoo

    ops = []
    for name in menu_op_names():
        fn = getattr(zoo, name)
        ops.append({"name": name, "import": f"from cudal1.kernelzoo import {name}", "signature": _plain_signature(name, fn),
                    "summary": _summary(name, fn),
                    "measured": sorted(measured.get(name, []), key=lambda m: (-m["speedup"], m["task"]))})
    return {"source": dict(source), "ops": ops}
