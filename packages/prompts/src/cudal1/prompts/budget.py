"""Fit a contrastive prompt into a token budget by dropping exemplars, never the task.

Trimming order: the exemplar with the LOWEST score goes first (an exemplar without a score counts as
lowest; among equal scores the longest code goes first, then the later one in the list). The kept
exemplars keep their original order. The task is never shortened: if the prompt with no exemplars
does not fit, :class:`PromptBudgetError` is raised.

Example:
    >>> from cudal1.prompts.templates import Exemplar
    >>> words = lambda s: len(s.split())
    >>> exs = [Exemplar(code="x = 1 " * 50, score=2.0), Exemplar(code="y = 2 " * 50, score=0.5)]
    >>> p = fit_to_budget("class Model: ...", exs, words, max_tokens=words(render_contrastive(
    ...     "class Model: ...", exs[:1])))
    >>> "x = 1" in p, "y = 2" in p
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cudal1.prompts.templates import Exemplar, render_contrastive


class PromptBudgetError(ValueError):
    """The task's prompt alone (no exemplars) exceeds the token budget.

    Example:
        >>> issubclass(PromptBudgetError, ValueError)
        True
    """


def trim_order(exemplars: Sequence[Exemplar]) -> list[int]:
    """Indices of ``exemplars`` in the order they are dropped: lowest score first, then longest code.

    Example:
        >>> trim_order([Exemplar("a", 1.0), Exemplar("b", None), Exemplar("cc", 0.5), Exemplar("d", 0.5)])
        [1, 2, 3, 0]
    """

    def key(i: int) -> tuple[bool, float, int, int]:
        ex = exemplars[i]
        has_score = ex.score is not None
        return (has_score, ex.score if has_score else 0.0, -len(ex.code), -i)

    return sorted(range(len(exemplars)), key=key)


def fit_to_budget(
    task_source: str,
    exemplars: Sequence[Exemplar],
    tokenizer_count: Callable[[str], int],
    max_tokens: int,
    menu: str = "",
) -> str:
    """Render the contrastive prompt with as many exemplars as fit in ``max_tokens`` tokens.

    Exemplars are dropped one at a time in :func:`trim_order` (lowest score first) until the rendered
    prompt fits; the task source is never cut.

    Args:
        task_source: the task's reference Python source.
        exemplars: earlier implementations, in the order they should appear.
        tokenizer_count: returns the number of tokens of a text (e.g.
            ``lambda s: len(tok(s).input_ids)``).
        max_tokens: the budget for the whole prompt, in tokens.
        menu: an op menu's text shown in the prompt (never cut, like the task).

    Raises:
        PromptBudgetError: even the prompt without any exemplar exceeds ``max_tokens``.
        ValueError: ``max_tokens < 1``.

    Example:
        >>> try:
        ...     fit_to_budget("class Model: ...", [], lambda s: len(s.split()), max_tokens=10)
        ... except PromptBudgetError as e:
        ...     print(str(e)[:40])
        the task alone needs 278 tokens but max_
    """
    return fit_exemplars(task_source, exemplars, tokenizer_count, max_tokens, menu)[0]


def fit_exemplars(
    task_source: str,
    exemplars: Sequence[Exemplar],
    tokenizer_count: Callable[[str], int],
    max_tokens: int,
    menu: str = "",
) -> tuple[str, list[Exemplar]]:
    """:func:`fit_to_budget`, also returning the exemplars the prompt shows (in prompt order).

    Example:
        >>> words = lambda s: len(s.split())
        >>> exs = [Exemplar(code="x = 1 " * 50, score=2.0), Exemplar(code="y = 2 " * 50, score=0.5)]
        >>> text, kept = fit_exemplars("class Model: ...", exs, words,
        ...                            words(render_contrastive("class Model: ...", exs[:1])))
        >>> [e.score for e in kept]
        [2.0]
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens!r}")
    kept = list(range(len(exemplars)))
    drop = trim_order(exemplars)
    while True:
        shown = [exemplars[i] for i in kept]
        prompt = render_contrastive(task_source, shown, menu)
        used = tokenizer_count(prompt)
        if used <= max_tokens:
            return prompt, shown
        if not kept:
            raise PromptBudgetError(
                f"the task alone needs {used} tokens but max_tokens={max_tokens}: "
                "raise max_tokens or use a shorter task" + (" or fewer menu ops" if menu.strip() else "")
                + "; no exemplar was shown"
            )
        kept.remove(drop.pop(0))
