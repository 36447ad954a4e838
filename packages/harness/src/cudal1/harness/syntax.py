"""Whether a source parses, answered in the parent without running any of it."""

from __future__ import annotations

import ast


def syntax_problem(source: str) -> str:
    """``"syntax error at line N: ..."`` when ``source`` does not parse as Python, else ``""``. Parsing runs
    nothing of the candidate (the worker would report the same error, after seconds of start-up)."""
    try:
        ast.parse(source)
    except SyntaxError as e:
        return f"syntax error at line {e.lineno}: {e.msg}" if e.lineno else f"syntax error: {e.msg}"
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
        return f"source cannot be parsed: {type(e).__name__}: {e}"[:300]
    return ""
