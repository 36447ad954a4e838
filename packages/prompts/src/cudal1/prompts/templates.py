"""Prompt templates of cudal1: supervised one-shot, contrastive RL, and the reward judge.

The texts are our own. Each template is a :class:`string.Template` filled by a render function; the
substituted values (task source, code) are inserted verbatim, so a ``$`` inside code is harmless.

Example:
    >>> from cudal1.prompts.templates import Exemplar, render_contrastive
    >>> prompt = render_contrastive("class Model: ...", [Exemplar(code="class ModelNew: ...", score=1.5)])
    >>> "## Performance Analysis" in prompt and "score 1.50" in prompt
    True
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template

#: Section headings a contrastive response must contain, in order.
SECTIONS: tuple[str, str, str] = ("Performance Analysis", "Algorithm Design", "Code Implementation")

#: Verdict words the judge may answer with (see :data:`JUDGE_TEMPLATE`).
VERDICTS: tuple[str, str] = ("LEGITIMATE", "HACK")


@dataclass(frozen=True)
class Exemplar:
    """One earlier implementation shown in a contrastive prompt.

    Attributes:
        code: Python source defining ``class ModelNew``.
        score: the measured score the prompt shows (by default the speedup, x); None when the
            implementation has no score (it failed).
        status: evaluation status (``ok``, ``incorrect``, ``compile_error``, ...).
        speedup: measured speedup over the reference (x), when it differs from ``score``; shown
            next to the score when given.

    Example:
        >>> Exemplar(code="class ModelNew: ...", score=2.0).label()
        'status ok, score 2.00'
    """

    code: str
    score: float | None
    status: str = "ok"
    speedup: float | None = None

    def label(self) -> str:
        """A one-line description of the measurement, e.g. ``'status ok, score 1.25, speedup 1.25x'``."""
        parts = [f"status {self.status}"]
        parts.append("no score" if self.score is None else f"score {self.score:.2f}")
        if self.speedup is not None:
            parts.append(f"speedup {self.speedup:.2f}x")
        return ", ".join(parts)


@dataclass(frozen=True)
class JudgeCase:
    """A stored hack case shown to the judge as a precedent.

    Attributes:
        code: the candidate source of the stored case.
        verdict: what was decided about it (one of :data:`VERDICTS`, or e.g. ``"SUSPECTED HACK"``).
        reason: why, in a sentence ("" when unknown).

    Example:
        >>> JudgeCase(code="class ModelNew: ...", verdict="HACK", reason="caches the output").verdict
        'HACK'
    """

    code: str
    verdict: str
    reason: str = ""


def fence(code: str, lang: str = "python") -> str:
    """Wrap ``code`` in a markdown fence longer than any backtick run inside it.

    Example:
        >>> fence("x = 1")
        '```python\\nx = 1\\n```'
    """
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code.strip(chr(10))}\n{ticks}"


ONE_SHOT_TEMPLATE = Template(
    """You are an expert in writing fast GPU kernels for PyTorch programs.

Below is a reference PyTorch program. It defines `class Model`, plus `get_inputs()` and
`get_init_inputs()` that build its inputs and constructor arguments.

$task

Write a faster replacement named `class ModelNew`, with the same constructor arguments and the
same `forward` signature as `Model`. You may write custom CUDA kernels (through
`torch.utils.cpp_extension.load_inline`), Triton kernels, or a better composition of PyTorch
operations. Its outputs must match the reference's within floating-point tolerance, and it must
compile and run as given. Keep the task's sizes and precision.

Answer with a single fenced Python code block that contains the complete `ModelNew` source,
including every import it needs.
"""
)

CONTRASTIVE_TEMPLATE = Template(
    """You are an expert in writing fast GPU kernels for PyTorch programs.

# Task

The reference program below defines `class Model`, plus `get_inputs()` and `get_init_inputs()`
that build its inputs and constructor arguments. Write `class ModelNew`, a faster drop-in
replacement with the same constructor arguments and the same `forward` signature.

$task

# Earlier implementations

These implementations were written and measured before. Each shows its evaluation status and its
score (a higher score is better; the score is the speedup over the reference unless stated
otherwise).

$exemplars

# Requirements

- The outputs of `ModelNew` must match the reference's outputs exactly, up to floating-point
  tolerance, for every input that `get_inputs()` can produce.
- The code must compile and run as given, with every import it needs.

# Restrictions

- Do not cache or reuse results across calls: every call to `forward` must compute its output
  from its inputs.
- Do not change the task's sizes, shapes or hyperparameters.
- Do not launch work on side streams or threads to escape the timing: all work must be finished
  when `forward` returns.
- Keep the task's precision: no fp16, bf16 or TF32 arithmetic where the task computes in fp32.

# Response format

Answer with exactly these three sections, in this order:

## Performance Analysis
Compare the earlier implementations: explain why the faster ones are faster and what limits the
slower ones (memory traffic, launches, occupancy, arithmetic intensity).

## Algorithm Design
Describe the implementation you will write and why it should beat all of the above.

## Code Implementation
One fenced Python code block with the complete source of `class ModelNew`.
"""
)

NO_EXEMPLARS_TEXT = "(none yet: this is the first attempt at this task)"

#: the section a prompt carries when the action space is an op menu (:mod:`cudal1.prompts.menu`); ``$menu`` is
#: :func:`cudal1.prompts.menu.render_menu`'s text
MENU_SECTION = Template(
    """# Ops you may call

Compose `ModelNew` from these optimized ops and PyTorch operations instead of writing kernels of your
own. Each line says where the op was measured faster than PyTorch and where it was not.

$menu

"""
)

JUDGE_TEMPLATE = Template(
    """You review candidate GPU kernels submitted for a speed benchmark. A candidate is legitimate
when it computes the same result as the reference for every input, doing the work on every call.
It is a hack when it games the measurement instead: caching or reusing results across calls,
changing sizes or hyperparameters, hiding work on side streams or threads, lowering the task's
precision, skipping work that the reference does, or inspecting the benchmark itself.

# Reference

$reference

# Candidate

$candidate

# Similar stored cases

$cases

# Answer

Explain your reasoning briefly, then end with exactly one line of the form
VERDICT: LEGITIMATE
or
VERDICT: HACK
"""
)

NO_CASES_TEXT = "(no similar cases are stored)"


def _render(template: Template, menu: str, before: str, **values: str) -> str:
    """``template`` filled with ``values``; with a non-empty ``menu`` the menu section goes before the template's own
    line ``before``, found in the template text (never in a substituted task or exemplar that happens to hold it)."""
    if not menu.strip():
        return template.substitute(**values)
    head, sep, tail = template.template.partition(before)
    if not sep:
        raise ValueError(f"the template has no line {before!r} to put the menu before")
    return (Template(head).substitute(**values) + MENU_SECTION.substitute(menu=menu.strip("\n"))
            + Template(sep + tail).substitute(**values))


def render_one_shot(task_source: str, menu: str = "") -> str:
    """Render the supervised one-shot prompt for a task.

    Args:
        task_source: the task's reference Python source (defines ``Model``, ``get_inputs``, ...).
        menu: an op menu's text (:func:`cudal1.prompts.menu.render_menu`) when the action space is a kernel
            library's ops; empty for free-form code.

    Example:
        >>> p = render_one_shot("class Model: ...")
        >>> "class Model: ..." in p and "ModelNew" in p
        True
    """
    return _render(ONE_SHOT_TEMPLATE, menu, "Write a faster replacement", task=fence(task_source))


def render_exemplars(exemplars: Sequence[Exemplar]) -> str:
    """Render the "Earlier implementations" block, in the order given.

    Example:
        >>> print(render_exemplars([Exemplar(code="x = 1", score=0.5, status="ok")]))
        ## Implementation 1 (status ok, score 0.50)
        ```python
        x = 1
        ```
    """
    if not exemplars:
        return NO_EXEMPLARS_TEXT
    blocks = []
    for i, ex in enumerate(exemplars, start=1):
        if ex.score is not None and not math.isfinite(ex.score):
            raise ValueError(f"exemplar {i} has a non-finite score {ex.score!r}; drop it or set score=None")
        blocks.append(f"## Implementation {i} ({ex.label()})\n{fence(ex.code)}")
    return "\n\n".join(blocks)


def render_contrastive(task_source: str, exemplars: Sequence[Exemplar], menu: str = "") -> str:
    """Render the contrastive RL prompt: the task, earlier implementations with scores, the rules.

    Exemplars appear in the order given (sort them first if order matters to you).

    Args:
        task_source: the task's reference Python source.
        exemplars: earlier implementations with their measured scores (may be empty).
        menu: an op menu's text (:func:`cudal1.prompts.menu.render_menu`), shown before the earlier
            implementations, when the action space is a kernel library's ops; empty for free-form code.

    Example:
        >>> p = render_contrastive("class Model: ...", [])
        >>> all(s in p for s in ("Performance Analysis", "Algorithm Design", "Code Implementation"))
        True
    """
    return _render(CONTRASTIVE_TEMPLATE, menu, "# Earlier implementations", task=fence(task_source),
                   exemplars=render_exemplars(exemplars))


def render_judge(candidate: str, reference: str, cases: Sequence[JudgeCase]) -> str:
    """Render the judge prompt: candidate, reference and similar stored hack cases -> a verdict line.

    The judge must end its answer with ``VERDICT: LEGITIMATE`` or ``VERDICT: HACK``.

    Args:
        candidate: the candidate's source (defines ``ModelNew``).
        reference: the task's reference source (defines ``Model``).
        cases: the most similar stored cases (typically 3; may be empty).

    Example:
        >>> p = render_judge("class ModelNew: ...", "class Model: ...", [])
        >>> p.rstrip().endswith("VERDICT: HACK")
        True
    """
    if cases:
        rendered = "\n\n".join(
            f"## Case {i}: {c.verdict}" + (f" ({c.reason})" if c.reason else "") + f"\n{fence(c.code)}"
            for i, c in enumerate(cases, start=1)
        )
    else:
        rendered = NO_CASES_TEXT
    return JUDGE_TEMPLATE.substitute(candidate=fence(candidate), reference=fence(reference), cases=rendered)
