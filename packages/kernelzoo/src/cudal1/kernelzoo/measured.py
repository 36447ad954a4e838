"""The measured figures of a solution set: for every solution file, what the results stores hold for its code, per
run (a GPU and a baseline), in one data file beside the set (issue 44: docstrings state intent and design; measured
figures live in results and in a per-set data file, checked against the stores, and docstrings link to it).

``<set folder>/measured.json`` (``FORMAT`` = 1):

* ``runs``: run id (``h100-eager``) -> :class:`Run`: the GPU the store's records name, the baseline, the store the
  figures were read from and the page that reports the run (paths from the repository root);
* ``tasks``: task -> ``{"code": code_identity(file), run id: Figure, ...}`` (a run that has no record of the file's
  code has no key).

A figure belongs to a file's code, not its text. :func:`code_identity` hashes the syntax tree without docstrings
(comments and layout count as little), so a docstring edit keeps a file's figures, and a code edit leaves them for
the old code: :meth:`Measured.figure` with the file's path gives nothing until that code is measured. The figures
are written and checked against the stores by ``benchmarks/scripts/set_figures.py``
(``tests/kernelzoo/test_measured_figures.py`` runs the check). ::

    from cudal1.kernelzoo.measured import measured
    from cudal1.kernelzoo.solutions import available

    m = measured("kernelbench-v0")
    fig = m.figure("12_Matmul_with_diagonal_matrices_", "h100-eager",
                   path=available("kernelbench-v0")["12_Matmul_with_diagonal_matrices_"])
    fig.speedup, fig.ci, m.runs["h100-eager"].gpu
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .solutions import set_dir
from .unsolved import Attempt

__all__ = ["FORMAT", "Figure", "Measured", "Run", "code_identity", "load", "measured", "measured_path"]

FORMAT = 1


def code_identity(source: str) -> str:
    """SHA-256 (hex) of ``source``'s code: its syntax tree with every docstring (module, class, function) removed,
    so that neither a docstring edit nor comments and layout change it, and any change of code does. ``SyntaxError``
    if ``source`` does not parse."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Run:
    """One measured run of a set: ``gpu`` (the device name its records give), ``baseline`` (how the reference was
    timed: eager, compile, ...), ``store`` (the results store, ``.sqlite`` or ``.sqlite.gz``) and ``page`` (the
    result page), paths from the repository root."""

    gpu: str
    baseline: str
    store: str
    page: str


@dataclass(frozen=True)
class Figure(Attempt):
    """A run's latest stored result for a file's code: :class:`~cudal1.kernelzoo.unsolved.Attempt`'s fields (UTC
    date, status, speedup over the run's baseline with its 95% CI, both times in ms a call, flags, verified) and
    ``improves``: whether the harness counts it as a real improvement (:func:`cudal1.harness.flags.improves`)."""

    improves: bool


@dataclass(frozen=True)
class Measured:
    """A set's ``measured.json``: its runs, each task's code identity, and each task's figures by run id."""

    runs: dict[str, Run]
    code: dict[str, str]
    figures: dict[str, dict[str, Figure]]

    def figure(self, task: str, run: str, path: Path | None = None) -> Figure | None:
        """``task``'s figure in ``run``, or None when there is none; with ``path`` (the task's solution file), also
        None when the file's code is not the code that was measured."""
        if run not in self.runs:
            raise KeyError(f"no run {run!r}; the file has: {', '.join(self.runs) or 'none'}")
        if path is not None and self.code.get(task) != code_identity(path.read_text(encoding="utf-8")):
            return None
        return self.figures.get(task, {}).get(run)


def measured_path(solution_set: str = "kernelbench-v0") -> Path:
    """The set's ``measured.json`` (``KeyError`` naming the sets the zoo has for an unknown set)."""
    return set_dir(solution_set) / "measured.json"


def _figure(e: dict) -> Figure:
    ci = e.get("ci")
    return Figure(measured=e["measured"], status=e["status"], speedup=e.get("speedup"),
                  ci=(float(ci[0]), float(ci[1])) if ci else None, reference_ms=e.get("reference_ms"),
                  ours_ms=e.get("ours_ms"), flags=tuple(e.get("flags", ())), verified=bool(e["verified"]),
                  improves=bool(e["improves"]))


def load(path: Path) -> Measured:
    """One ``measured.json``; ``ValueError`` naming the run or task and the field when it is malformed."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: format {doc.get('format')!r}, this code reads format {FORMAT}")
    runs: dict[str, Run] = {}
    for rid, r in doc.get("runs", {}).items():
        try:
            runs[rid] = Run(gpu=r["gpu"], baseline=r["baseline"], store=r["store"], page=r["page"])
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}: run {rid!r} lacks or mistypes {err}: each run needs gpu, baseline, store and "
                             "page") from err
    code: dict[str, str] = {}
    figures: dict[str, dict[str, Figure]] = {}
    for task, e in doc.get("tasks", {}).items():
        try:
            code[task] = e["code"]
            figures[task] = {rid: _figure(f) for rid, f in e.items() if rid != "code"}
        except (KeyError, TypeError, IndexError) as err:
            raise ValueError(f"{path}: task {task!r} lacks or mistypes {err}: each task needs code and, per run, "
                             "measured, status, verified and improves (see cudal1.kernelzoo.measured)") from err
        unknown = set(figures[task]) - set(runs)
        if unknown:
            raise ValueError(f"{path}: task {task!r} has figures of runs the file does not name: {sorted(unknown)}")
    return Measured(runs=runs, code=code, figures=figures)


def measured(solution_set: str = "kernelbench-v0") -> Measured:
    """The set's measured figures (empty for a set without a ``measured.json``)."""
    path = measured_path(solution_set)
    return load(path) if path.exists() else Measured(runs={}, code={}, figures={})
