"""cudal1.harness: task suites, sandboxed candidate evaluation, honest timing and the results store.

    from cudal1.harness import load_suite, evaluate, reference_candidate
    tasks = load_suite("builtin:level1")
    result = evaluate(tasks[0], reference_candidate(tasks[0]))   # EvalResult(status='ok', speedup=1.0, ...)
"""

from .config import BASELINES, EvalConfig
from .pool import EvalPool, evaluate
from .store import ResultStore, StoreError
from .suite import (
    SuiteError,
    SuiteLoad,
    TaskProblem,
    load_suite,
    load_suite_report,
    reference_candidate,
    task_from_module,
)
from .summary import format_summary, summarize
from .types import STATUSES, Candidate, EvalResult, Task

__all__ = [
    "BASELINES",
    "STATUSES",
    "Candidate",
    "EvalConfig",
    "EvalPool",
    "EvalResult",
    "ResultStore",
    "StoreError",
    "SuiteError",
    "SuiteLoad",
    "Task",
    "TaskProblem",
    "evaluate",
    "format_summary",
    "load_suite",
    "load_suite_report",
    "reference_candidate",
    "summarize",
    "task_from_module",
]
