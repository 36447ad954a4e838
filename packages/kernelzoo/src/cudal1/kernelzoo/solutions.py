"""The zoo's released kernels: one ``ModelNew`` source per built-in task, built from the zoo's ops.

Files live in ``cudal1/kernelzoo/released/<task>.py`` (task names are unique across the built-in levels).
The harness finds them by name through the ``cudal1.solutions`` entry point, so
``cudal1-eval --suite builtin --solutions kernelzoo`` evaluates them, and from Python::

    from cudal1.harness import evaluate, load_suite
    from cudal1.kernelzoo.solutions import candidate_for

    task = next(t for t in load_suite("builtin:level1") if t.name == "softmax")
    result = evaluate(task, candidate_for(task.name))
"""

from __future__ import annotations

from pathlib import Path

from cudal1.harness.types import Candidate

RELEASED = Path(__file__).resolve().parent / "released"


def solutions_dir() -> Path:
    """Folder of ``<task>.py`` solution files (the ``cudal1.solutions`` entry point ``kernelzoo``)."""
    return RELEASED


def available() -> dict[str, Path]:
    """Task name -> solution file, for every released solution."""
    return {p.stem: p for p in sorted(RELEASED.glob("*.py"))}


def solution_source(task: str) -> str:
    """Source of the released solution for built-in task ``task``; ``KeyError`` naming the known tasks if none."""
    files = available()
    if task not in files:
        raise KeyError(f"the kernel zoo has no solution for task {task!r}; it has: {', '.join(files) or 'none'}")
    return files[task].read_text(encoding="utf-8")


def candidate_for(task: str) -> Candidate:
    """The released solution of ``task`` as a harness :class:`~cudal1.harness.types.Candidate`."""
    return Candidate(source=solution_source(task), task=task, origin="solutions:kernelzoo")
