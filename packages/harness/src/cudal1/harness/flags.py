"""The one vocabulary of findings: every flag an :class:`~cudal1.harness.types.EvalResult` can carry, and
what it means for trusting the result.

Kinds:

=============  ==========================================================================================
kind           meaning
=============  ==========================================================================================
reject         the pair failed because of it (status ``rejected`` or ``incorrect``); never on an ``ok``
suspect        the result may be ``ok`` but is not to be trusted as an improvement without a closer look
               (a judge, a re-measurement): it often hides a hack
measurement    says how the figure was taken (unstable timing, throttled GPU, no OS sandbox); the
               verdict stands, the number is less certain
descriptive    describes the candidate (custom kernel, torch.compile); nothing wrong with it
task           about the task, not the candidate: the result is left out of every aggregate
=============  ==========================================================================================

:func:`verified` is the single rule that rewards, prompts, self-training, search and reports read: status
``ok`` and no flag of kind ``reject``, ``suspect`` or ``task``. :func:`improves` adds what a reward or a
training example needs on top: not the reference handed back (``same_as_reference``), and a speedup whose
95% confidence interval lies above 1. A flag this registry does not know counts as
``suspect`` (a newer harness may have added it; an unknown finding is no reason to trust a result).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

KINDS: tuple[str, ...] = ("reject", "suspect", "measurement", "descriptive", "task")


@dataclass(frozen=True)
class Flag:
    """One registered finding: its name, kind (one of :data:`KINDS`) and a sentence saying what it means."""

    name: str
    kind: str
    meaning: str


_FLAGS = (
    # -- reject: the pair failed because of it ------------------------------------------------------------
    Flag("monkeypatch", "reject", "the candidate replaced a function of torch, the timers or the harness"),
    Flag("calls_reference", "reject", "the candidate names the reference Model or imports a task module"),
    Flag("introspection", "reject", "the source reaches into the interpreter or the process (frames, gc, ctypes, "
         "/proc, raw file descriptors, signals, subprocesses)"),
    Flag("mode_change", "reject", "a submodule was in training mode after a candidate call"),
    Flag("threads_left_running", "reject", "a thread the candidate started still ran after its call returned"),
    Flag("input_mutated", "reject", "the candidate wrote into its inputs"),
    Flag("timed_output_mismatch", "reject", "the output of a timed call differed from the reference's on the same "
         "inputs (a cache keyed on pointers, shapes or call counts)"),
    Flag("protocol_violation", "reject", "the candidate's process sent a message out of turn, unknown or malformed "
         "(e.g. a forged result written into the harness's channel)"),
    Flag("timing_disagrees", "reject", "the parent's own clock around the candidate's batches saw more time than "
         "the candidate's process reported, beyond the reference's overhead and the noise"),
    Flag("reference_drift", "reject", "the clean reference process ran slower while the candidate's process was "
         "alive than before it was loaded, and than beside a copy of itself: something of the candidate kept the GPU "
         "or the machine busy"),
    # -- suspect: may be ok, not trusted as an improvement -------------------------------------------------
    Flag("side_stream", "suspect", "the candidate creates CUDA streams"),
    Flag("threads", "suspect", "the candidate imports threading, concurrent.futures or multiprocessing"),
    Flag("reduced_precision", "suspect", "fp16/bf16/fp8/TF32 arithmetic (or a switch to it) in a task whose "
         "reference does not use it"),
    Flag("exception_fallback", "suspect", "try/except inside forward"),
    Flag("mode_call", "suspect", "forward calls .train()/.eval() or assigns .training"),
    Flag("stateful_forward", "suspect", "forward assigns to self (a possible result cache)"),
    Flag("library_flag", "suspect", "the candidate sets a torch.backends switch (cuDNN benchmark, TF32 ...)"),
    Flag("remeasure_disagrees", "suspect", "a second measurement of the speedup disagreed with the first"),
    Flag("reference_slowed", "suspect", "the reference ran slower than alone beside the candidate, and beside a copy "
         "of itself it also ran slower than that copy: something outside the pair (another process, the machine's "
         "load) slowed the reference's process, so the speedup is inflated and not trusted"),
    Flag("timing_unresolved", "suspect", "the parent's clock could not resolve the candidate's time per call: the "
         "noise of its batches beside the reference's (the machine's load, on a call this short) was more than "
         "half of it, room in which reported times could hide work"),
    Flag("timing_erratic", "suspect", "a speedup above 1 whose reported attempt's buckets spread wider than the "
         "speedup itself (beyond attempts.ERRATIC_SPREAD): a figure of a machine in chaos says nothing"),
    Flag("cpu_contended", "suspect", "CPU: the reference's threads waited for a core beyond the limit during the "
         "timed batches of the attempt reported (no calm attempt passed), or during its time alone after every "
         "retry: another program's load, or more torch threads than free cores (EvalConfig.cpu_threads); figures "
         "of such a machine say nothing of either model"),
    # -- measurement: how the figure was taken --------------------------------------------------------------
    Flag("timing_unstable", "measurement", "bucket means spread more than the limit in every attempt"),
    Flag("gpu_throttled", "measurement", "NVML reported thermal or power slowdown during timing"),
    Flag("unsandboxed", "measurement", "the candidate ran without the OS sandbox (no bubblewrap, no namespaces); "
         "the verdict is still the parent's, but the candidate could reach the machine"),
    Flag("remeasured", "measurement", "the speedup was measured a second time and agreed"),
    Flag("harness_error", "measurement", "the harness itself failed on this pair"),
    Flag("baseline_failed", "measurement", "the reference could not run in the requested baseline mode"),
    # -- descriptive ---------------------------------------------------------------------------------------
    Flag("uses_custom_kernel", "descriptive", "a kernel the candidate defines (or of a kernel library it imports) "
         "ran on the GPU"),
    Flag("torch_compile", "descriptive", "the candidate uses torch.compile / dynamo / inductor"),
    Flag("cuda_graph", "descriptive", "the candidate captures or replays CUDA graphs: part of its speedup may be "
         "host launch time saved (the cudagraph baseline shows how much); a graph that replays stale inputs or hands "
         "out memory the next call overwrites fails the fresh-input and timed-output checks"),
    Flag("same_as_reference", "descriptive", "the candidate is the reference: the same normalised source, or one "
         "call dispatched the reference's operators in the same order on the same shapes (correct, but no "
         "improvement: see improves)"),
    Flag("reference_stateful", "descriptive", "the reference keeps state across calls; both models were compared "
         "and timed from identical state"),
    # -- task ------------------------------------------------------------------------------------------------
    Flag("task_degenerate", "task", "the task's output is constant or does not depend on an input"),
    Flag("task_error", "task", "the task itself failed to load or run its Model"),
)

REGISTRY: dict[str, Flag] = {f.name: f for f in _FLAGS}
assert all(f.kind in KINDS for f in _FLAGS)

#: kinds that keep a result from being :func:`verified`
UNTRUSTED_KINDS = frozenset({"reject", "suspect", "task"})
#: suspect flags that speak of the machine, not of the candidate's code: the parent's clock could not resolve the
#: figure, something outside the pair slowed the reference or took its cores, or a speedup came from buckets in chaos.
#: A correct result whose only untrusting flags are these was left unverified by the machine's noise (on a loaded
#: 2-core CPU, now and then, for honest candidates too)
MACHINE_NOISE = frozenset({"timing_unresolved", "reference_slowed", "cpu_contended", "timing_erratic"})


def kind_of(flag: str) -> str:
    """The kind of ``flag``; ``suspect`` for a name the registry does not know."""
    f = REGISTRY.get(flag)
    return f.kind if f is not None else "suspect"


def flags_of_kind(*kinds: str) -> frozenset[str]:
    """Registered flag names of the given kinds, e.g. ``flags_of_kind("reject")``."""
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown flag kind(s) {bad}; kinds are {KINDS}")
    return frozenset(f.name for f in _FLAGS if f.kind in kinds)


def verified(status: str, flags: Iterable[str]) -> bool:
    """Whether a result may be trusted as a working solution with the speedup it reports: status ``ok`` and
    no flag of kind reject, suspect or task (measurement and descriptive flags are allowed)."""
    return status == "ok" and not any(kind_of(f) in UNTRUSTED_KINDS for f in flags)


def improves(status: str, flags: Iterable[str], speedup_ci: tuple[float, float] | None) -> bool:
    """Whether a result is a real improvement, the one rule rewards, prompts and self-training pay or keep:
    :func:`verified`, not ``same_as_reference``, and the lower bound of the speedup's 95% confidence interval
    above 1 (the unrounded interval: a 1.004x rounded to 1.00 or up to 1.01 is no evidence either way)."""
    flags = tuple(flags)
    if not verified(status, flags) or "same_as_reference" in flags or speedup_ci is None:
        return False
    lo = speedup_ci[0]
    return isinstance(lo, (int, float)) and lo > 1.0


def excluded(flags: Iterable[str]) -> bool:
    """Whether a result is left out of aggregate figures (a ``task`` flag: the task, not the candidate)."""
    return any(kind_of(f) == "task" for f in flags)


def describe(flag: str) -> str:
    """``name (kind): meaning`` for a person."""
    f = REGISTRY.get(flag)
    return f"{flag} (suspect): not a registered flag" if f is None else f"{f.name} ({f.kind}): {f.meaning}"


__all__ = ["KINDS", "MACHINE_NOISE", "REGISTRY", "UNTRUSTED_KINDS", "Flag", "describe", "excluded", "flags_of_kind", "improves",
           "kind_of", "verified"]
