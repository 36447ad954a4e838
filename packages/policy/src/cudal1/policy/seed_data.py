"""Supervised examples: the shipped seed data (released solutions, references rewritten as ``ModelNew``) and
the JSONL format shared with teacher data (apps/collect_sft.py).

An example is a conversational prompt-completion pair, the format trl's SFTTrainer trains on with the loss on
the completion only::

    {"prompt": [{"role": "user", "content": <prompt>}],
     "completion": [{"role": "assistant", "content": <response>}],
     "task": <task name>, "origin": "seed:solutions:kernelzoo" | "seed:reference" | "teacher:<model>" | ...}

Each source yields two examples: the one-shot prompt (answer: one fenced code block) and the contrastive
prompt with the reference as the only earlier implementation (answer: the three required sections), so the
policy learns both formats the later stages use.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cudal1.harness import Candidate, Task
from cudal1.prompts import Exemplar, render_contrastive, render_one_shot
from cudal1.prompts.templates import fence

__all__ = ["contrastive_response", "examples_for", "measured_examples", "read_jsonl", "reference_as_modelnew",
           "seed_examples", "write_jsonl"]


def reference_as_modelnew(task_source: str) -> str:
    """The task's reference rewritten as a candidate: ``class Model`` renamed ``ModelNew`` (``super(Model, ...)``
    too), ``get_inputs``/``get_init_inputs`` dropped; imports and module constants kept. A correct
    candidate with a speedup of about 1x: the floor every later solution should beat."""
    tree = ast.parse(task_source)
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            continue
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            node.name = "ModelNew"
        body.append(node)
    tree.body = body
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Model":
            node.id = "ModelNew"
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        raise ValueError("the task source defines no module-level class Model")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def contrastive_response(code: str, analysis: str, design: str) -> str:
    """A response in the contrastive format (the three sections :func:`cudal1.prompts.parse_response` reads)."""
    return (f"## Performance Analysis\n{analysis.strip()}\n\n## Algorithm Design\n{design.strip()}\n\n"
            f"## Code Implementation\n{fence(code)}\n")


def _docstring(code: str) -> str:
    try:
        return ast.get_docstring(ast.parse(code)) or ""
    except SyntaxError:
        return ""


def examples_for(task: Task, code: str, origin: str, *, analysis: str | None = None,
                 design: str | None = None, menu: str = "") -> list[dict[str, Any]]:
    """The one-shot and the contrastive example of solution ``code`` for ``task``; both prompts carry ``menu`` (an op
    menu's text, :mod:`cudal1.policy.action_space`) when the action space is the zoo's."""
    doc = _docstring(code)
    analysis = analysis or ("The reference runs each PyTorch operation as its own kernel, writing every "
                            "intermediate to memory and reading it back; its time is set by that memory traffic "
                            "and by the launches.")
    design = design or (doc or "Keep the reference's arithmetic and precision, and compute the same result.")
    ref = Exemplar(code=reference_as_modelnew(task.source), score=1.0, status="ok", speedup=1.0)

    def ex(prompt: str, answer: str, kind: str) -> dict[str, Any]:
        return {"prompt": [{"role": "user", "content": prompt}],
                "completion": [{"role": "assistant", "content": answer}],
                "task": task.name, "origin": origin, "kind": kind}

    return [ex(render_one_shot(task.source, menu), fence(code) + "\n", "one_shot"),
            ex(render_contrastive(task.source, [ref], menu), contrastive_response(code, analysis, design),
               "contrastive")]


def seed_examples(tasks: Sequence[Task], solutions: Iterable[tuple[Task, Candidate]] = (), *,
                  menu: str = "") -> list[dict[str, Any]]:
    """Seed data for ``tasks``: each released solution in ``solutions`` whose task is among ``tasks`` (matched
    by name; the prompt shows the task as given, e.g. resized), then each task's reference as ModelNew. With an op
    ``menu`` (the zoo action space) every prompt carries it, and the released solutions, which compose the zoo's
    ops, teach its use."""
    by_name = {t.name: t for t in tasks}
    out: list[dict[str, Any]] = []
    for task, cand in solutions:
        if task.name in by_name:
            out += examples_for(by_name[task.name], cand.source, f"seed:{cand.origin}", menu=menu)
    for task in tasks:
        out += examples_for(task, reference_as_modelnew(task.source), "seed:reference",
                            analysis="This is the reference itself, the baseline every later solution is measured "
                                     "against (speedup 1.00x).",
                            design="Reproduce the reference exactly as ModelNew: same operations, same precision.",
                            menu=menu)
    return out


def measured_examples(tasks: Sequence[Task], solutions: Iterable[tuple[Task, Candidate]],
                      results: dict[str, dict[str, Any]], suite: str) -> list[dict[str, Any]]:
    """Teacher data from a solution set measured on a GPU: the examples of each solution whose result (``results``:
    task name -> the evaluate app's record, ``status``, ``flags``, ``speedup``, ``ci``) is a real improvement by the
    harness's one rule (:func:`cudal1.harness.flags.improves`: verified, not a copy of the reference, the speedup's
    95% CI above 1). Each example carries ``suite``, the measured ``speedup`` and its ``ci``, so that training can
    weigh or filter it and a held-out check can see where it came from."""
    from cudal1.harness.flags import improves

    by_name = {t.name: t for t in tasks}
    out: list[dict[str, Any]] = []
    for task, cand in solutions:
        rec = results.get(task.name)
        if task.name not in by_name or rec is None:
            continue
        ci = tuple(rec["ci"]) if rec.get("ci") else None
        if not improves(rec.get("status", ""), rec.get("flags", ()), ci):
            continue
        for ex in examples_for(by_name[task.name], cand.source, f"teacher:{cand.origin}"):
            out.append({**ex, "suite": suite, "speedup": rec.get("speedup"), "ci": list(ci) if ci else None})
    return out


def write_jsonl(path: str | Path, examples: Iterable[dict[str, Any]], *, append: bool = False) -> int:
    """Write examples one JSON object per line (appending when ``append``). Returns the count written."""
    n = 0
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        for e in examples:
            f.write(json.dumps(e) + "\n")
            n += 1
    return n


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read examples written by :func:`write_jsonl`; a malformed line is an error naming its number."""
    out = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{i}: not a JSON object ({err})") from err
        if not isinstance(e, dict) or "prompt" not in e or "completion" not in e:
            raise ValueError(f"{path}:{i}: an example needs 'prompt' and 'completion' (chat message lists)")
        out.append(e)
    return out
