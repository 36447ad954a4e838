"""The trust boundary's last step: turn what the parent observed about one pair into an EvalResult.

:class:`Observations` holds only what the parent saw itself (outputs it compared, its own clock, the
workers' deaths and time-outs, protocol breaks) plus the candidate process's hints (findings of its in-process
checks, which can only flag or fail it). :func:`assemble` is a pure function of it: the candidate's process
never sends a status, a verdict or a speedup.

Order of precedence: the task failing (``task_error``: never the candidate's fault) > the candidate's worker
gone (timeout, crash, protocol violation) > a failure the candidate's process reported (compile error, an
exception, a rejecting in-process check) > a wrong output (``incorrect``) > a rejecting timing check
(``timing_disagrees``, ``reference_drift``) > ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .flags import kind_of
from .timing import TimingSummary
from .types import EvalResult


@dataclass
class Failure:
    """Why a pair ended early: status, reason and the flag naming the rule (if any)."""

    status: str
    reason: str
    flag: str | None = None


@dataclass
class Observations:
    """Everything the parent knows about one pair when it is over."""

    task: str
    task_hash: str
    candidate_hash: str
    baseline: str
    device: str
    task_failure: Failure | None = None
    candidate_gone: Failure | None = None  # timeout / died / protocol violation, as the parent saw it
    candidate_failure: Failure | None = None  # what the candidate's process reported (error reply)
    reference_failure: Failure | None = None  # the reference failed during the pair
    incorrect: Failure | None = None
    timing_failure: Failure | None = None
    flags: set[str] = field(default_factory=set)
    evidence: dict[str, Any] = field(default_factory=dict)
    correctness: dict[str, Any] = field(default_factory=dict)
    summary: TimingSummary | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    uses_custom_kernel: bool | None = None
    log_tail: str = ""
    wall_s: float = 0.0
    sandboxed: bool = True


def _flags(obs: Observations, extra: str | None = None) -> tuple[str, ...]:
    fl = set(obs.flags)
    if extra:
        fl.add(extra)
    if not obs.sandboxed:
        fl.add("unsandboxed")
    return tuple(sorted(fl))


def assemble(obs: Observations) -> EvalResult:
    """The verdict on one pair (see the module docstring for the order of precedence)."""
    base: dict[str, Any] = {"task": obs.task, "baseline": obs.baseline, "device": obs.device,
                            "task_hash": obs.task_hash, "candidate_hash": obs.candidate_hash,
                            "log_tail": obs.log_tail[-2000:], "wall_s": obs.wall_s,
                            "environment": obs.environment, "build": obs.build, "integrity": obs.evidence,
                            "timing": obs.timing, "correctness": obs.correctness}
    for failure in (obs.task_failure, obs.candidate_gone, obs.candidate_failure, obs.reference_failure,
                    obs.incorrect, obs.timing_failure):
        if failure is not None:
            flags = _flags(obs, failure.flag)
            return EvalResult(status=failure.status, reason=failure.reason, flags=flags,
                              uses_custom_kernel=obs.uses_custom_kernel, **base)
    if obs.summary is None:
        return EvalResult(status="runtime_error", reason="the pair ended without a timing measurement",
                          flags=_flags(obs, "harness_error"), **base)
    s = obs.summary
    flags = _flags(obs)
    bad = [f for f in flags if kind_of(f) == "reject"]
    if bad:  # a rejecting finding without a failure is a harness bug: never report ok with it
        return EvalResult(status="rejected", reason=f"rejecting finding(s) {', '.join(bad)}", flags=flags, **base)
    return EvalResult(status="ok", reason="", speedup=s.speedup, speedup_ci=s.ci, ref_ms=s.ref_ms, cand_ms=s.cand_ms,
                      flags=flags, uses_custom_kernel=obs.uses_custom_kernel, **base)
