"""Parse a policy's contrastive response (and a judge's verdict) into their parts.

A response must contain three markdown headings (any level ``#`` to ``######``, case-insensitive, an
optional leading number like ``1.`` and trailing colon allowed): "Performance Analysis",
"Algorithm Design" and "Code Implementation". Headings inside fenced code blocks do not count (a
Python comment ``# Performance Analysis`` is not a heading). The code is the LAST closed fenced
Python block (tagged ``python``/``py``/``python3`` or untagged) that defines ``class ModelNew``,
wherever it is in the text.

Example:
    >>> text = '''## Performance Analysis
    ... Launch bound.
    ... ## Algorithm Design
    ... Fuse the ops.
    ... ## Code Implementation
    ... ```python
    ... class ModelNew: pass
    ... ```'''
    >>> r = parse_response(text)
    >>> r.analysis, r.design, r.code
    ('Launch bound.', 'Fuse the ops.', 'class ModelNew: pass')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudal1.prompts.templates import SECTIONS, VERDICTS

_PY_TAGS = {"", "python", "py", "python3"}
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_MODELNEW = re.compile(r"^[ \t]*class[ \t]+ModelNew\b", re.MULTILINE)
_HEADING = re.compile(
    r"^ {0,3}#{1,6}[ \t]+(?:\d+[.)][ \t]*)?(?P<title>"
    + "|".join(re.escape(s) for s in SECTIONS)
    + r")[ \t]*:?[ \t]*#*[ \t]*$",
    re.IGNORECASE,
)
_VERDICT = re.compile(r"^\W*VERDICT\W*:\W*(?P<v>" + "|".join(VERDICTS) + r")\b", re.IGNORECASE | re.MULTILINE)


class ResponseFormatError(ValueError):
    """The response lacks a required part; the message names every missing part.

    Example:
        >>> try:
        ...     parse_response("no sections here")
        ... except ResponseFormatError as e:
        ...     "Performance Analysis" in str(e)
        True
    """


@dataclass(frozen=True)
class ParsedResponse:
    """The parts of a contrastive response.

    Attributes:
        analysis: body of the "Performance Analysis" section (stripped).
        design: body of the "Algorithm Design" section (stripped).
        code: the Python source defining ``ModelNew`` (without the fence).

    Example:
        >>> ParsedResponse(analysis="a", design="d", code="class ModelNew: pass").design
        'd'
    """

    analysis: str
    design: str
    code: str


@dataclass(frozen=True)
class _Block:
    start_line: int  # line of the opening fence
    end_line: int  # line of the closing fence (== len(lines) when unclosed)
    info: str
    body: str
    closed: bool


def _fenced_blocks(lines: list[str]) -> list[_Block]:
    """Fenced code blocks, CommonMark style: closed by the same character, at least as long."""
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        info = m.group("info").strip().split(" ")[0].lower() if m.group("info").strip() else ""
        blocks.append(_Block(i, j, info, "\n".join(lines[i + 1 : j]), closed=j < len(lines)))
        i = j + 1
    return blocks


def _find_code(blocks: list[_Block]) -> tuple[str, str]:
    """(code, "") for the last closed Python block defining ModelNew, else ("", what is wrong)."""
    py_blocks = [b for b in blocks if b.info in _PY_TAGS]
    with_model = [b for b in py_blocks if _MODELNEW.search(b.body)]
    closed = [b for b in with_model if b.closed]
    if not py_blocks:
        return "", "no fenced Python code block found"
    if not with_model:
        return "", f"none of the {len(py_blocks)} fenced Python code block(s) defines `class ModelNew`"
    if not closed:
        return "", "the code block defining `class ModelNew` is never closed (was the response truncated?)"
    return closed[-1].body.strip("\n"), ""


def extract_code(text: str) -> str:
    """The last closed fenced Python block defining ``class ModelNew``, for one-shot responses.

    No section headings are required (the one-shot prompt asks for code only).

    Raises:
        ResponseFormatError: no fenced Python block, none defines ``ModelNew``, or it is unclosed.

    Example:
        >>> extract_code("Here:\\n```python\\nclass ModelNew: pass\\n```\\n")
        'class ModelNew: pass'
    """
    code, problem = _find_code(_fenced_blocks(text.splitlines()))
    if problem:
        raise ResponseFormatError("malformed response: " + problem)
    return code


def parse_response(text: str) -> ParsedResponse:
    """Split a contrastive response into analysis, design and code.

    When a heading appears more than once, the last occurrence counts (a model that restates its
    answer means the final version). A section's body runs to the next of the three headings.

    Raises:
        ResponseFormatError: a section heading is missing or its section is empty, there is no
            fenced Python code block, or none of the code blocks defines ``class ModelNew``; the
            message lists every problem found.

    Example:
        >>> try:
        ...     parse_response("## Performance Analysis\\nx\\n## Algorithm Design\\ny")
        ... except ResponseFormatError as e:
        ...     print(e)
        malformed response: missing section heading 'Code Implementation'; no fenced Python code block found
    """
    lines = text.splitlines()
    blocks = _fenced_blocks(lines)
    in_code = set()
    for b in blocks:
        in_code.update(range(b.start_line, min(b.end_line, len(lines) - 1) + 1))

    headings: list[tuple[int, str]] = []  # (line, canonical title)
    for n, line in enumerate(lines):
        if n in in_code:
            continue
        m = _HEADING.match(line)
        if m:
            title = next(s for s in SECTIONS if s.lower() == m.group("title").lower())
            headings.append((n, title))

    problems: list[str] = []
    bodies: dict[str, str] = {}
    for title in SECTIONS:
        where = [k for k, (_, t) in enumerate(headings) if t == title]
        if not where:
            problems.append(f"missing section heading {title!r}")
            continue
        k = where[-1]
        start = headings[k][0] + 1
        end = headings[k + 1][0] if k + 1 < len(headings) else len(lines)
        bodies[title] = "\n".join(lines[start:end]).strip()
        if not bodies[title] and title != SECTIONS[2]:
            problems.append(f"section {title!r} is empty")

    code, code_problem = _find_code(blocks)
    if code_problem:
        problems.append(code_problem)

    if problems:
        raise ResponseFormatError("malformed response: " + "; ".join(problems))
    return ParsedResponse(analysis=bodies[SECTIONS[0]], design=bodies[SECTIONS[1]], code=code)


def parse_verdict(text: str) -> str:
    """Read the judge's verdict: the last ``VERDICT: LEGITIMATE`` / ``VERDICT: HACK`` line, upper-cased.

    Raises:
        ResponseFormatError: no verdict line found.

    Example:
        >>> parse_verdict("It recomputes everything.\\nVERDICT: legitimate")
        'LEGITIMATE'
    """
    found = _VERDICT.findall(text)
    if not found:
        raise ResponseFormatError(
            f"no verdict line found: expected a line 'VERDICT: {VERDICTS[0]}' or 'VERDICT: HACK'"
        )
    return found[-1].upper()
