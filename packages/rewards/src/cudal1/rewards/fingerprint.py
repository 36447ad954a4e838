"""Normalised-AST fingerprints and structural n-grams of candidate code (for the hack-case store).

Names (variables, arguments, functions, classes, import aliases) become ``v0, v1, ...`` in order of
first appearance; numbers become 0 and strings ""; docstrings are dropped (comments never reach the
AST). Attribute names and keyword names are kept: ``torch.cuda.Stream`` is what makes a hack.

Example:
    >>> from cudal1.rewards.fingerprint import fingerprint
    >>> fingerprint("def f(x):\\n    return x + 1") == fingerprint("def g(y):  # c\\n    return y + 2")
    True
"""

from __future__ import annotations

import ast
import hashlib
import re

__all__ = ["fingerprint", "ngrams", "jaccard"]


class _Normaliser(ast.NodeTransformer):
    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _n(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def _strip_docstring(self, node: ast.AST) -> None:
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self._strip_docstring(node)
        return self.generic_visit(node)

    def _visit_def(self, node: ast.AST) -> ast.AST:
        self._strip_docstring(node)
        node.name = self._n(node.name)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._n(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._n(node.arg)
        node.annotation = None
        return node

    def visit_alias(self, node: ast.alias) -> ast.AST:
        node.asname = self._n(node.asname or node.name.split(".")[0])
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self._n(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        v = node.value
        if isinstance(v, str):
            node.value = ""
        elif isinstance(v, bytes):
            node.value = b""
        elif isinstance(v, (int, float, complex)) and not isinstance(v, bool):
            node.value = 0
        return node


def _normalised(code: str) -> ast.AST | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return _Normaliser().visit(tree)


def _text_tokens(code: str) -> list[str]:
    code = re.sub(r"#[^\n]*|//[^\n]*", "", code)
    return re.findall(r"[A-Za-z_]\w*|\S", code)


def fingerprint(code: str) -> str:
    """sha256 hex digest of ``code``'s normalised AST (of its token stream if it does not parse).

    Example:
        >>> len(fingerprint("x = 1"))
        64
    """
    tree = _normalised(code)
    if tree is None:
        text = "text:" + " ".join(_text_tokens(code))
    else:
        text = "ast:" + ast.dump(tree, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _node_tokens(tree: ast.AST) -> list[str]:
    out: list[str] = []

    def walk(node: ast.AST) -> None:
        tok = type(node).__name__
        if isinstance(node, ast.Attribute):
            tok += "." + node.attr
        elif isinstance(node, ast.keyword) and node.arg:
            tok += "." + node.arg
        out.append(tok)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def ngrams(code: str, n: int = 3) -> frozenset[str]:
    """The set of ``n``-grams of AST node types (pre-order; attribute names kept) of ``code``.

    Falls back to n-grams of text tokens when ``code`` does not parse.

    Example:
        >>> sorted(ngrams("x = y", n=2))[:2]
        ['Assign Name', 'Module Assign']
    """
    tree = _normalised(code)
    toks = _text_tokens(code) if tree is None else _node_tokens(tree)
    if len(toks) < n:
        return frozenset([" ".join(toks)]) if toks else frozenset()
    return frozenset(" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b| (1.0 for two empty sets), e.g. ``jaccard(frozenset("ab"), frozenset("bc")) == 1/3``."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
