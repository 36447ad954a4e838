"""Training tasks: built-in (or any suite's) tasks, optionally shrunk to sizes a CPU can evaluate.

A recipe names tasks as ``suite`` + ``names`` + optional ``sizes`` (task -> {MODULE_CONSTANT: value}). The
built-in tasks are sized for a data-centre GPU (milliseconds a call;
benchmarks/results/2026-12-05-library-docstring-figures.md); on a 2-core CPU the default recipe replaces their
module-level size constants (``BATCH = 4096`` -> ``BATCH = 64``) so that a harness evaluation takes seconds.
The shrunk task is a new :class:`~cudal1.harness.Task` (new source, new hash, suite ``<suite>+resized``), so
its results never mix with the full-size task's in a results store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cudal1.harness import Task, load_suite

if TYPE_CHECKING:
    from .recipe import TasksSection

__all__ = ["TaskSelectionError", "held_out_names", "resized_task", "select_tasks", "train_and_held_out"]


class TaskSelectionError(ValueError):
    """A recipe names a task or a size constant that does not exist."""


def resized_task(task: Task, sizes: Mapping[str, int | float]) -> Task:
    """``task`` with each module-level ``NAME = ...`` line of ``sizes`` replaced by ``NAME = value``.

    Example:
        >>> t = Task(name="t", source="N = 4096\\nclass Model: ...\\n")
        >>> resized_task(t, {"N": 64}).source.splitlines()[0]
        'N = 64'
    """
    if not sizes:
        return task
    src = task.source
    for name, value in sizes.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TaskSelectionError(f"task {task.name}: size {name} must be a number, got {value!r}")
        src, n = re.subn(rf"^{re.escape(name)}\s*=.*$", f"{name} = {value!r}", src, count=1, flags=re.M)
        if n != 1:
            raise TaskSelectionError(f"task {task.name} has no module-level constant {name} to resize; "
                                     f"check the recipe's sizes against the task file")
    return Task(name=task.name, source=src, level=task.level, suite=f"{task.suite}+resized", path=task.path)


def select_tasks(suite: str, names: Sequence[str] = (), sizes: Mapping[str, Mapping[str, int | float]] | None = None,
                 ) -> list[Task]:
    """Tasks of ``suite`` (e.g. ``builtin``, ``builtin:level1``, ``dir:PATH``) named in ``names`` (all when
    empty), in the order given, each resized by ``sizes[name]`` where present."""
    tasks = {t.name: t for t in load_suite(suite)}
    sizes = dict(sizes or {})
    chosen = list(names) or sorted(tasks)
    unknown = [n for n in chosen if n not in tasks]
    unknown += [n for n in sizes if n not in tasks]
    if unknown:
        raise TaskSelectionError(f"suite {suite} has no task {sorted(set(unknown))}; "
                                 f"list them with: uv run cudal1-eval --suite {suite} --list")
    return [resized_task(tasks[n], sizes.get(n, {})) for n in chosen]


def held_out_names(split_name: str | None, extra: Sequence[str] = ()) -> list[str]:
    """Task names a recipe keeps out of training: the split's held-out side plus ``extra``."""
    from .splits import split

    names = list(split(split_name).held_out) if split_name else []
    return sorted(set(names) | set(extra))


def train_and_held_out(section: TasksSection, evaluation_names: Sequence[str] = ()) -> tuple[list[Task], list[Task]]:
    """The train tasks and the held-out tasks to evaluate of a recipe's ``tasks`` section (a
    :class:`cudal1.policy.recipe.TasksSection`): ``names`` (default: every task of the suite not held out)
    and ``evaluation_names`` (default: every held-out task), each resized by ``sizes``.

    Raises TaskSelectionError for a held-out task in the training list, an evaluation task that is not held
    out, an unknown task, or an empty side."""
    suite = section.suite
    names = list(section.names)
    sizes = dict(section.sizes)
    held = held_out_names(section.split, section.held_out)
    leaked = sorted(set(names) & set(held))
    if leaked:
        raise TaskSelectionError(f"held-out task(s) {leaked} are in tasks.names: a task held out for evaluation "
                                 f"is never trained on (remove them, or set tasks.split: null)")
    available = {t.name for t in load_suite(suite)}
    if not names:
        names = sorted(available - set(held))
    if not names:
        raise TaskSelectionError(f"no train task left in suite {suite} once the held-out tasks are removed")
    evaluation = list(evaluation_names) or [n for n in held if n in available]
    unknown = sorted(set(evaluation) - available)
    if unknown:
        raise TaskSelectionError(f"suite {suite} has no task {unknown} (evaluation.names); "
                                 f"list them with: uv run cudal1-eval --suite {suite} --list")
    outside = sorted(set(evaluation) - set(held))
    if outside:
        raise TaskSelectionError(f"evaluation task(s) {outside} are not held out (tasks.split / tasks.held_out): "
                                 f"measuring a task that training saw would not show generalisation")
    train = select_tasks(suite, names, {k: v for k, v in sizes.items() if k in names})
    unknown_sizes = sorted(set(sizes) - set(names) - set(evaluation) - available)
    if unknown_sizes:
        raise TaskSelectionError(f"tasks.sizes names task(s) {unknown_sizes} that suite {suite} does not have")
    held_tasks = select_tasks(suite, evaluation, {k: v for k, v in sizes.items() if k in evaluation}) if evaluation else []
    return train, held_tasks
