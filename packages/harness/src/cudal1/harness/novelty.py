"""Whether a candidate changes anything: the reference handed back, under a new name or not, is no solution.

Two findings make the descriptive flag ``same_as_reference`` (the result stays verified: the code is
correct; it is just no improvement, see :func:`cudal1.harness.flags.improves`):

* **source** (parent side, from the two texts): the candidate's normalised source equals the reference's.
  Normalised: docstrings, ``get_inputs``/``get_init_inputs``, imports and ``__future__`` lines dropped,
  ``Model``/``ModelNew`` read as one name, every other identifier of the module numbered in order of first
  appearance (so renaming variables, methods or the class changes nothing), formatting and comments gone
  (the AST). :func:`normalised_source`.
* **operators** (the workers' op records): one call of the candidate dispatched the same sequence of ATen
  operators on the same shapes and dtypes as one call of the reference (:func:`op_signature`). Catches a
  copy that was restructured (a helper function, a subclass of ``nn.Module`` calling the same ops in the
  same order). The candidate's record comes from its own process, so a candidate could forge it: that only
  lets a disguised copy escape this flag, never earn a speedup (which the parent measures itself).

Every verified result also keeps its **behaviour** (``EvalResult.integrity["behaviour"]``,
:func:`behaviour_identity`): the operator sequence of one call and the set of GPU kernels one call launched, as one
digest. Two candidates of a task with the same behaviour dispatch the same operators on the same shapes and launch
the same kernels (by name: launch settings such as block sizes are not in it), however their sources differ. The
trainer compares it with the exemplars a prompt showed (:mod:`cudal1.policy.rewarding`): a copy with a statement
split in two or a no-op added has a new source identity but the same behaviour.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable

__all__ = ["SIGNATURE_OPS_MAX", "behaviour_identity", "normalised_source", "op_signature", "same_source",
           "source_identity"]

SIGNATURE_OPS_MAX = 100_000  #: operators of one call an OpRecorder keeps for its signature (the rest are not hashed)

_DROP_FUNCS = frozenset({"get_inputs", "get_init_inputs"})
_MODEL_NAMES = frozenset({"Model", "ModelNew"})


class _Normaliser(ast.NodeTransformer):
    """Numbers identifiers in order of first appearance; ``Model``/``ModelNew`` become one name. Attribute
    names of other objects (``torch.relu``, ``self.linear``) are names of their API and stay; names this module
    binds (functions, classes, arguments, variables) are renumbered."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.names: dict[str, str] = {}

    def _name(self, n: str) -> str:
        if n in _MODEL_NAMES:
            return "MODEL"
        if n not in self.bound:
            return n
        return self.names.setdefault(n, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == self._name("self"):
            node.attr = self._name(node.attr)  # the module's own attributes (self.fc, self.scale) are its names
        return node


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds itself: definitions, arguments, assignment targets and self attributes."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id == "self"):
            out.add(node.attr)
    return out


def _strip(body: list[ast.stmt]) -> list[ast.stmt]:
    out = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.FunctionDef) and node.name in _DROP_FUNCS:
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            continue  # a docstring or a bare string statement: no computation
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.body = _strip(node.body) or [ast.Pass()]
        out.append(node)
    return out


def normalised_source(source: str) -> str | None:
    """The source reduced to its computation (see the module docstring); None when it does not parse.

    Example:
        >>> a = "import torch\\nclass Model(torch.nn.Module):\\n    def forward(self, x):\\n        return x.relu()\\n"
        >>> b = "import torch\\nclass ModelNew(torch.nn.Module):\\n    def forward(self, inp):\\n        return inp.relu()  # mine\\n"
        >>> normalised_source(a) == normalised_source(b)
        True
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    tree.body = _strip(tree.body)
    tree = _Normaliser(_bound_names(tree)).visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def source_identity(source: str) -> str | None:
    """SHA-256 (hex) of :func:`normalised_source` (names, docstrings, comments, imports and layout aside): two
    sources with the same identity compute the same way; None when ``source`` does not parse."""
    norm = normalised_source(source)
    return None if norm is None else hashlib.sha256(norm.encode("utf-8")).hexdigest()


def same_source(candidate_source: str, task_source: str) -> bool:
    """Whether the candidate is the task's reference by :func:`normalised_source`."""
    a, b = normalised_source(candidate_source), normalised_source(task_source)
    return a is not None and a == b


def op_signature(ops: Iterable[tuple[str, str]]) -> str:
    """A digest of one call's operator sequence: ``ops`` yields ``(operator name, shapes and dtypes)`` in
    dispatch order (:class:`cudal1.harness.integrity.OpRecorder` records them)."""
    h = hashlib.sha256()
    for name, args in ops:
        h.update(f"{name}\0{args}\n".encode())
    return h.hexdigest()


def behaviour_identity(signature: str | None, kernels: Iterable[str] | None) -> str | None:
    """SHA-256 (hex) of one call's :func:`op_signature` and the names of the GPU kernels one call launched (order and
    repeats aside; None or empty on a CPU): what a candidate does, whatever its source looks like. None when the
    operators could not be recorded (``signature`` None): such a result matches nothing."""
    if signature is None:
        return None
    h = hashlib.sha256(signature.encode())
    for name in sorted(set(kernels or ())):
        h.update(f"\n{name}".encode())
    return h.hexdigest()
