"""Solution sets: folders of ``<task name>.py`` files defining ``ModelNew``, given as a path or as the name of an
installed set (entry points of group ``cudal1.solutions``, e.g. ``kernelzoo``, ``kernelbench-v0``). Used by
``cudal1-eval --solutions``, the training pipeline's seed data and the apps; no command line here."""

from __future__ import annotations

import json
from pathlib import Path

from .types import Candidate, Task

__all__ = ["SOLUTION_SETS", "SolutionSetError", "load_solutions", "resolve_solutions", "solution_sets",
           "uncovered_note"]


class SolutionSetError(ValueError):
    """A solution set that is neither a folder nor an installed set's name (or whose set points nowhere)."""


SOLUTION_SETS = "cudal1.solutions"  # entry-point group: name -> callable returning a folder of <task>.py


def solution_sets() -> dict[str, object]:
    """Installed solution sets by name (entry points of group ``cudal1.solutions``, e.g. ``kernelzoo``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=SOLUTION_SETS)}


def resolve_solutions(spec: str) -> tuple[Path, str]:
    """(folder, origin label) for ``--solutions``: an existing folder, else an installed set's name.

    Raises:
        SolutionSetError: neither (the message names the installed sets)."""
    d = Path(spec).expanduser()
    if d.is_dir():
        return d, f"solutions:{d}"
    sets = solution_sets()
    if spec in sets:
        folder = Path(sets[spec].load()())  # type: ignore[attr-defined]
        if not folder.is_dir():
            raise SolutionSetError(f"solution set {spec} points at {folder}, which is not a folder; reinstall its "
                                   "package")
        return folder, f"solutions:{spec}"
    known = f"installed sets: {', '.join(sorted(sets))}" if sets else "no solution set is installed"
    raise SolutionSetError(f"--solutions {spec}: the folder {d} does not exist and no installed solution set has "
                           f"that name ({known})")


def load_solutions(folder: str, tasks: list[Task]) -> tuple[list[tuple[Task, Candidate]], list[str]]:
    """Pairs for tasks that have ``<name>.py`` in ``folder`` (or in the installed solution set of that
    name); plus names of files matching no task."""
    d, origin = resolve_solutions(folder)
    by_name = {t.name: t for t in tasks}
    pairs, unknown = [], []
    for f in sorted(d.glob("*.py")):
        task = by_name.get(f.stem)
        if task is None:
            unknown.append(f.name)
            continue
        try:
            src = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            src = f"raise ImportError({('cannot read solution file: ' + str(e))!r})\n"
        pairs.append((task, Candidate(source=src, task=task.name, origin=origin)))
    return pairs, unknown


def uncovered_note(spec: str, tasks: list[Task], pairs: list[tuple[Task, Candidate]]) -> str | None:
    """One line naming how many of the suite's tasks the solutions have no file for (None when every task has
    one). A solution set may say why in an ``unsolved.json`` beside its files (``{"tasks": {name: {"reason": ...,
    "why": ...}}}``, e.g. the zoo's ``kernelbench-v0``); the line then counts the tasks it explains."""
    covered = {t.name for t, _ in pairs}
    missing = [t.name for t in tasks if t.name not in covered]
    if not missing:
        return None
    line = f"{len(missing)} of the suite's {len(tasks)} tasks have no file in {spec} and are not evaluated"
    f = resolve_solutions(spec)[0] / "unsolved.json"
    if f.is_file():
        try:
            explained = json.loads(f.read_text(encoding="utf-8"))["tasks"]
            line += f"; {f} says why for {sum(n in explained for n in missing)} of them"
        except (OSError, ValueError, KeyError, TypeError):
            line += f"; {f} is not readable JSON with a 'tasks' object"
    return line
