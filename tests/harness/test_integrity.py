"""The integrity contract, rule by rule: an adversarial candidate that a naive KernelBench-style harness
accepts and ours catches, and a legitimate optimization of the same flavour that ours accepts.

The naive harness below does what DESIGN.md warns against: one shared namespace for task and candidate,
the same inputs on every call, one correctness check (reference, then candidate on the same tensors),
outputs of timed calls never checked, default init, models left in training mode, 1e-2 tolerance.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from cudal1.harness import Candidate, EvalPool, load_suite
from cudal1.harness.flags import flags_of_kind
from cudal1.harness.types import EvalResult

FIX = Path(__file__).parent / "fixtures"


def naive_harness(task_src: str, cand_src: str, calls: int = 3) -> tuple[bool, float]:
    """(correct, speedup) as a naive harness would report them."""
    ns: dict = {}
    exec(compile(task_src, "task.py", "exec"), ns)  # noqa: S102 - the naive harness's own mistake
    exec(compile(cand_src, "candidate.py", "exec"), ns)  # noqa: S102
    init = ns["get_init_inputs"]()
    torch.manual_seed(42)
    ref = ns["Model"](*init)
    torch.manual_seed(42)
    new = ns["ModelNew"](*init)
    torch.manual_seed(1)
    inputs = ns["get_inputs"]()
    with torch.no_grad():
        r = ref(*inputs)  # reference first, then the candidate on the same tensors, one check
        c = new(*inputs)
        if not torch.allclose(c, r, atol=1e-2, rtol=1e-2):
            return False, 0.0
        t0 = time.perf_counter()
        for _ in range(calls):
            ref(*inputs)
        t1 = time.perf_counter()
        for _ in range(calls):
            new(*inputs)
        t2 = time.perf_counter()
    return True, (t1 - t0) / max(t2 - t1, 1e-9)


@dataclass(frozen=True)
class Case:
    rule: str
    kind: str  # "adversarial" | "legitimate"
    task: str  # fixture task (tasks/ or degenerate_tasks/)
    candidate: str  # fixtures/integrity/<name>.py
    status: str  # expected status
    flag: str | None = None  # flag that must name the finding (adversarial) / may appear (legitimate)


CASES = [
    Case("caching", "adversarial", "tiny_linear_relu", "cache_by_pointer", "incorrect"),
    Case("caching", "adversarial", "tiny_linear_relu", "cache_by_call_count", "incorrect", "timed_output_mismatch"),
    Case("caching", "legitimate", "tiny_linear_relu", "cache_weight_transpose", "ok"),
    Case("sizes", "adversarial", "tiny_iterated_tanh", "shrink_hyperparameter", "incorrect"),
    Case("sizes", "legitimate", "tiny_iterated_tanh", "own_constants", "ok"),
    Case("lazy output", "adversarial", "tiny_linear_relu", "lazy_subclass", "incorrect"),
    Case("lazy output", "legitimate", "tiny_linear_relu", "noncontiguous_output", "ok"),
    Case("precision", "adversarial", "tiny_linear_relu", "half_precision_matmul", "incorrect", "reduced_precision"),
    Case("precision", "adversarial", "tiny_linear_relu", "half_mask_exact", "ok", "reduced_precision"),
    Case("precision", "legitimate", "tiny_linear_relu", "fp32_explicit", "ok"),
    Case("default init", "adversarial", "tiny_layernorm", "../candidates/layernorm_default_init_only", "incorrect"),
    Case("default init", "legitimate", "tiny_layernorm", "../candidates/layernorm_handwritten", "ok"),
    Case("degenerate task", "adversarial", "constant_softmax", "returns_constant", "ok", "task_degenerate"),
    Case("degenerate task", "legitimate", "healthy_layernorm", "../candidates/layernorm_handwritten", "ok"),
    Case("mode", "adversarial", "tiny_batchnorm", "batchnorm_switches_to_train", "rejected", "mode_change"),
    Case("mode", "legitimate", "tiny_batchnorm", "batchnorm_folded", "ok"),
    Case("monkeypatch", "adversarial", "tiny_linear_relu", "patch_functional_static", "rejected", "monkeypatch"),
    Case("monkeypatch", "adversarial", "tiny_linear_relu", "patch_functional_hidden", "rejected", "monkeypatch"),
    Case("monkeypatch", "legitimate", "tiny_linear_relu", "own_helper_named_linear", "ok"),
    Case("input mutation", "adversarial", "tiny_linear_relu", "mutates_input", "rejected", "input_mutated"),
    Case("input mutation", "legitimate", "tiny_linear_relu", "inplace_epilogue", "ok"),
    Case("fallback", "adversarial", "tiny_linear_relu", "fallback_to_reference", "rejected", "calls_reference"),
    Case("fallback", "legitimate", "tiny_linear_relu", "optional_import", "ok"),
    Case("threads", "adversarial", "tiny_linear_relu", "background_thread", "rejected", "threads_left_running"),
    Case("threads", "legitimate", "tiny_linear_relu", "joined_thread", "ok", "threads"),
    Case("forging", "adversarial", "tiny_linear_relu", "forge_result_message", "rejected", "protocol_violation"),
]
# flags a legitimate case may carry without being called out: the registry's measurement and descriptive kinds
DESCRIPTIVE = flags_of_kind("measurement", "descriptive")


def task_source(name: str) -> str:
    for folder in ("tasks", "degenerate_tasks"):
        p = FIX / folder / f"{name}.py"
        if p.exists():
            return p.read_text()
    raise FileNotFoundError(name)


def case_candidate(case: Case) -> Candidate:
    return Candidate(source=(FIX / "integrity" / f"{case.candidate}.py").read_text(), task=case.task)


def case_id(c: Case) -> str:
    return f"{c.rule}-{c.kind}-{Path(c.candidate).name}"


@pytest.fixture(scope="module")
def verdicts(fast_config) -> dict[str, EvalResult]:
    from cudal1.harness.types import Task

    pool = EvalPool(fast_config, cpu_lanes=2)
    pairs = [(Task(name=c.task, source=task_source(c.task)), case_candidate(c)) for c in CASES]
    return dict(zip([case_id(c) for c in CASES], pool.map(pairs), strict=True))


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "adversarial"], ids=case_id)
def test_adversarial_case_fools_a_naive_harness(case):
    # run in a child process: some cases write into every file descriptor or leave threads behind
    import inspect
    import json
    import subprocess
    import sys

    code = (
        "import json, sys, time, torch\n" + inspect.getsource(naive_harness)
        + "\nt, c = json.loads(sys.stdin.read())\nprint('NAIVE', naive_harness(t, c)[0])\n"
    )
    payload = json.dumps([task_source(case.task), case_candidate(case).source])
    res = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True, timeout=120)
    assert "NAIVE True" in res.stdout, (res.stdout[-500:], res.stderr[-2000:])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_our_harness_verdict(verdicts, case):
    res = verdicts[case_id(case)]
    assert res.status == case.status, (res.status, res.reason, res.flags)
    if case.kind == "adversarial":
        # never ok without a flag naming it
        assert case.flag is None or case.flag in res.flags, (res.flags, res.reason)
        assert res.status != "ok" or case.flag in res.flags
        if res.status != "ok":
            assert res.reason
    else:
        # timing_unresolved says the machine could not resolve the time (two lanes on two cores: 0.017-0.03 ms of
        # noise a call beside calls of 0.01-0.06 ms, 2026-12-04), nothing about the candidate; the timing tests
        # (test_timing_integrity.py, one lane) hold honest twins to being resolved
        allowed = DESCRIPTIVE | {"timing_unresolved"} | ({case.flag} if case.flag else set())
        assert set(res.flags) <= allowed, (res.flags, res.reason)


def test_degenerate_results_are_left_out_of_the_summary(verdicts):
    from cudal1.harness import summarize

    res = verdicts[case_id(CASES[12])]
    s = summarize([res])
    assert s["excluded"] == 1 and s["ok"] == 0


def test_check_suite_finds_each_degenerate_task(fast_config):
    tasks = load_suite(f"dir:{FIX / 'degenerate_tasks'}")
    recs = {r["task"]: r for r in EvalPool(fast_config).check_tasks(tasks)}
    assert recs["healthy_layernorm"]["status"] == "ok" and recs["healthy_layernorm"]["notes"] == []
    assert "constant output" in recs["constant_softmax"]["findings"][0]
    assert recs["ignores_second_input"]["findings"] == ["output does not depend on input 1"]
    # a parameter without measurable effect is a note on the task, not degeneracy: candidates are still judged
    assert recs["bias_cancelled_by_norm"]["status"] == "ok"
    assert recs["bias_cancelled_by_norm"]["notes"] == ["output does not depend measurably on parameter conv.bias"]
