"""The zoo's released kernels: one ``ModelNew`` source per task, built from the zoo's ops, in two solution sets.

* ``kernelzoo``: the built-in tasks (``cudal1/kernelzoo/released/<task>.py``; task names are unique across the
  built-in levels).
* ``kernelbench-v0``: KernelBench levels 1-3 at their original sizes (``cudal1/kernelzoo/kernelbench_v0/<task>.py``,
  named after the task file, e.g. ``23_Softmax.py``; the tasks themselves are not shipped: check out KernelBench
  at the commit named in that folder's README and load them with ``kernelbench:<its folder>``).

The harness finds a set by name through the ``cudal1.solutions`` entry points, so
``cudal1-eval --suite builtin --solutions kernelzoo`` or
``cudal1-eval --suite kernelbench:KB --solutions kernelbench-v0`` evaluates them, and from Python::

    from cudal1.harness import evaluate, load_suite
    from cudal1.kernelzoo.solutions import candidate_for

    task = next(t for t in load_suite("builtin:level1") if t.name == "softmax")
    result = evaluate(task, candidate_for(task.name))
"""

from __future__ import annotations

from pathlib import Path

from cudal1.harness.types import Candidate

_HERE = Path(__file__).resolve().parent
RELEASED = _HERE / "released"
KERNELBENCH_V0 = _HERE / "kernelbench_v0"
#: solution set name -> folder of ``<task>.py`` files
SETS = {"kernelzoo": RELEASED, "kernelbench-v0": KERNELBENCH_V0}


def solutions_dir() -> Path:
    """Folder of the built-in tasks' solution files (the ``cudal1.solutions`` entry point ``kernelzoo``)."""
    return RELEASED


def kernelbench_dir() -> Path:
    """Folder of the KernelBench solution files (the ``cudal1.solutions`` entry point ``kernelbench-v0``)."""
    return KERNELBENCH_V0


def set_dir(solution_set: str) -> Path:
    """Folder of ``solution_set``'s files; ``KeyError`` naming the sets the zoo has if there is no such set."""
    if solution_set not in SETS:
        raise KeyError(f"no solution set {solution_set!r}; the zoo has: {', '.join(SETS)}")
    return SETS[solution_set]


def available(solution_set: str = "kernelzoo") -> dict[str, Path]:
    """Task name -> solution file, for every solution of ``solution_set``."""
    return {p.stem: p for p in sorted(set_dir(solution_set).glob("*.py"))}


def solution_source(task: str, solution_set: str = "kernelzoo") -> str:
    """Source of ``solution_set``'s solution for task ``task``; ``KeyError`` naming the known tasks if none."""
    files = available(solution_set)
    if task not in files:
        raise KeyError(f"the kernel zoo's set {solution_set} has no solution for task {task!r}; it has: "
                       f"{', '.join(files) or 'none'}")
    return files[task].read_text(encoding="utf-8")


def candidate_for(task: str, solution_set: str = "kernelzoo") -> Candidate:
    """``solution_set``'s solution of ``task`` as a harness :class:`~cudal1.harness.types.Candidate`."""
    return Candidate(source=solution_source(task, solution_set), task=task, origin=f"solutions:{solution_set}")
