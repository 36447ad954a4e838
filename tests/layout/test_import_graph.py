"""Data flows one way (issue 44): no import circle among the modules of packages/ (imports under TYPE_CHECKING and
inside functions count: a circle is a circle however late it closes), and no library module imports a command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[2] / "packages"
CLI_MODULES = {"cudal1.harness.cli", "cudal1.harness.__main__"}


def modules(root: Path = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``<package>/src/``."""
    out = {}
    for f in root.glob("*/src/cudal1/**/*.py"):
        parts = f.relative_to(root).parts
        name = ".".join(parts[parts.index("src") + 1:]).removesuffix(".py").removesuffix(".__init__")
        out[name] = f
    return out


def import_edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``mods`` it imports. ``from pkg import sub`` names the submodule only (not the
    package's ``__init__``) when every imported name is a submodule."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rsplit(".", 1)[0]
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, ast.ImportFrom):
                if n.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)]
                    target = ".".join(base + ([n.module] if n.module else []))
                else:
                    target = n.module or ""
                subs = [f"{target}.{a.name}" for a in n.names if f"{target}.{a.name}" in mods]
                names = subs if len(subs) == len(n.names) else [target, *subs]
            elif isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            else:
                continue
            edges[m].update(t for t in names if t in mods and t != m)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circle_in_packages():
    mods = modules()
    assert len(mods) > 100, "the package layout moved: update PACKAGES"
    found = circles(import_edges(mods))
    assert not found, f"import circles: {found}"


def test_the_circle_finder_finds_a_circle_and_ignores_a_chain():
    """Adversarial: a -> b -> c -> a (the last link inside a function) is a circle. Legitimate twin: a -> b -> c."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_library_module_imports_a_command_line():
    edges = import_edges(modules())
    offenders = sorted(m for m, to in edges.items() if m not in CLI_MODULES and to & CLI_MODULES)
    assert not offenders, f"modules importing the cudal1-eval command line: {offenders}"
