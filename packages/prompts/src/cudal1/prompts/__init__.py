"""cudal1.prompts: prompt templates, exemplar sampling, response parsing and token budgets.

Example:
    >>> import random
    >>> from cudal1.prompts import Exemplar, render_contrastive, sample_exemplars
    >>> pool = [Exemplar(code=f"class ModelNew: pass  # {s}", score=s) for s in (0.8, 1.2, 2.5)]
    >>> prompt = render_contrastive("class Model: ...", sample_exemplars(pool, n=2, rng=random.Random(0)))
    >>> prompt.count("## Implementation")
    2
"""

from cudal1.prompts.budget import PromptBudgetError, fit_exemplars, fit_to_budget, trim_order
from cudal1.prompts.menu import Menu, MenuError, MenuOp, load_menu, render_menu
from cudal1.prompts.parsing import (
    ParsedResponse,
    ResponseFormatError,
    extract_code,
    parse_response,
    parse_verdict,
)
from cudal1.prompts.sampling import Bucket, bucketize, sample_exemplars
from cudal1.prompts.templates import (
    SECTIONS,
    VERDICTS,
    Exemplar,
    JudgeCase,
    render_contrastive,
    render_judge,
    render_one_shot,
)

__all__ = [
    "SECTIONS",
    "VERDICTS",
    "Bucket",
    "Exemplar",
    "JudgeCase",
    "Menu",
    "MenuError",
    "MenuOp",
    "ParsedResponse",
    "PromptBudgetError",
    "ResponseFormatError",
    "bucketize",
    "extract_code",
    "fit_exemplars",
    "fit_to_budget",
    "load_menu",
    "parse_response",
    "parse_verdict",
    "render_contrastive",
    "render_judge",
    "render_menu",
    "render_one_shot",
    "sample_exemplars",
    "trim_order",
]
