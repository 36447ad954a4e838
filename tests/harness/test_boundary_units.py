"""Units of the trust boundary that need no worker: the flag registry, the reply parser, the paired-round
statistics and the calls per batch, and the state snapshot of stateful models. (The parent's clock, output digests and
a worker's setup have files of their own: test_parent_clock.py, test_output_digests.py, test_worker_setup.py.)"""

from __future__ import annotations

import random

import pytest
import torch

from cudal1.harness import EvalResult
from cudal1.harness.flags import REGISTRY, flags_of_kind, kind_of, verified
from cudal1.harness.protocol import ProtocolError, parse_reply
from cudal1.harness.timing import PairedTimes, summarise_rounds


# -- flags ---------------------------------------------------------------------------------------------------
def test_every_flag_has_one_kind_and_verified_reads_them():
    assert flags_of_kind("reject") & flags_of_kind("suspect") == frozenset()
    assert verified("ok", ["uses_custom_kernel", "timing_unstable", "unsandboxed"])
    assert not verified("ok", ["reduced_precision"])  # suspect
    assert not verified("ok", ["task_degenerate"])  # task
    assert not verified("incorrect", [])
    assert kind_of("a_flag_from_a_newer_harness") == "suspect"  # unknown: never trusted
    assert not verified("ok", ["a_flag_from_a_newer_harness"])
    r = EvalResult(task="t", status="ok", speedup=1.2, flags=("side_stream",))
    assert not r.verified and EvalResult(task="t", status="ok", speedup=1.2).verified
    assert EvalResult(task="t", status="task_error").excluded
    with pytest.raises(ValueError, match="unknown flag kind"):
        flags_of_kind("bogus")


def test_static_check_flags_are_registered():
    from cudal1.harness.static_checks import REJECTING

    assert REJECTING <= flags_of_kind("reject")
    for f in ("side_stream", "threads", "reduced_precision", "exception_fallback", "mode_call", "stateful_forward",
              "library_flag", "cuda_graph", "torch_compile"):
        assert f in REGISTRY, f


def test_cuda_graphs_are_allowed_and_said():
    """A graph that copies its inputs in and its output out carries only the descriptive cuda_graph flag; what a
    graph could fake (stale inputs, a reused output buffer) is left to the dynamic checks (test_gpu.py)."""
    from pathlib import Path

    from cudal1.harness.static_checks import analyse

    src = (Path(__file__).parent / "fixtures" / "integrity_gpu" / "graph_replay_copying.py").read_text()
    flags = analyse(src).flags
    assert "cuda_graph" in flags and kind_of("cuda_graph") == "descriptive"
    assert verified("ok", [f for f in flags if f != "custom_kernel_source"]), flags


# -- replies -----------------------------------------------------------------------------------------------------
def test_replies_out_of_turn_unknown_or_malformed_are_protocol_errors():
    ok = {"type": "batch", "id": "abc", "ms": [1.0, 2.0]}
    assert parse_reply(ok, "batch", "abc", calls=2).ms == (1.0, 2.0)
    placed = parse_reply({**ok, "placement": {"inputs": [0, 512], "outputs": [-1, 1024]}}, "batch", "abc", calls=2)
    assert placed.placement == {"inputs": (0, 512), "outputs": (-1, 1024)}
    stepped = parse_reply({**ok, "steps_ms": {"draw": 3, "calls": 2.5}}, "batch", "abc", calls=2)
    assert stepped.steps_ms == {"draw": 3.0, "calls": 2.5} and placed.steps_ms is None
    trial = {"type": "trial", "id": "t", "outputs": [[{"kind": "value", "value": 1}]]}
    assert parse_reply({**trial, "steps_ms": {"draw": 1, "calls": 2, "digest": 3}}, "trial", "t", calls=1).steps_ms == {
        "draw": 1.0, "calls": 2.0, "digest": 3.0}
    with pytest.raises(ProtocolError, match="steps_ms"):  # a trial's diagnostics are checked like a batch's
        parse_reply({**trial, "steps_ms": {"digest": float("inf")}}, "trial", "t", calls=1)
    for bad, words in (({**ok, "steps_ms": {"draw": -1.0}}, "steps_ms"), ({**ok, "steps_ms": {"sleep": 1.0}}, "steps_ms"),
                       ({**ok, "steps_ms": [1.0]}, "steps_ms"), ({**ok, "id": "zzz"}, "another command"),
                       ({"type": "result", "result": {"status": "ok", "speedup": 77}}, "another command"),
                       ({**ok, "type": "trial"}, "reply to a 'batch'"),
                       ({**ok, "ms": [1.0]}, "batch times"),
                       ({**ok, "ms": [1.0, float("nan")]}, "batch times"),
                       ({**ok, "ms": [1.0, -2.0]}, "batch times"),
                       ({**ok, "placement": {"inputs": [0, 512]}}, "placement is not"),
                       ({**ok, "placement": {"inputs": [0], "outputs": [0, 1]}}, "placement inputs"),
                       ({**ok, "placement": {"inputs": [0, True], "outputs": [0, 1]}}, "placement inputs"),
                       ({"type": "error", "id": "abc", "status": "ok"}, "error reply with status"),
                       ([1, 2], "not a JSON object")):
        with pytest.raises(ProtocolError, match=words):
            parse_reply(bad, "batch", "abc", calls=2)
    err = parse_reply({"type": "error", "id": "abc", "status": "runtime_error", "reason": "raised"}, "batch", "abc")
    assert err.is_error and err.status == "runtime_error"  # a failure claim: it can only fail the pair


# -- statistics and sizing ----------------------------------------------------------------------------------------
def test_paired_rounds_cancel_slow_periods_that_hit_both_models():
    times = PairedTimes()
    rng = random.Random(0)
    for r in range(40):
        slow = 2.0 if 10 <= r < 20 else 1.0  # the machine is twice as slow for a quarter of the rounds
        times.ref.extend(slow * (1.0 + rng.uniform(0, 0.02)) for _ in range(8))
        times.cand.extend(slow * (0.5 + rng.uniform(0, 0.01)) for _ in range(8))
    s = summarise_rounds(times, 8, buckets=5, spread_limit=0.1)
    assert s.speedup_raw == pytest.approx(2.0, rel=0.03) and s.stable
    assert s.ci[0] <= s.speedup_raw <= s.ci[1] and s.rounds == 320


def test_calls_per_batch_fit_the_gpu():
    from cudal1.harness import EvalConfig
    from cudal1.harness.protocol import WorkerReport
    from cudal1.harness.reference_side import calls_per_batch as _calls_per_batch

    gib = 1 << 30
    tiny = WorkerReport("setup", "x", call_ms=0.05, set_bytes=1 << 20, out_bytes=1 << 20, free_bytes=70 * gib)
    assert _calls_per_batch(tiny, EvalConfig(device="cuda"), "cuda") == 32
    huge = WorkerReport("setup", "x", call_ms=20.0, set_bytes=2 * gib, out_bytes=6 * gib, free_bytes=70 * gib)
    assert _calls_per_batch(huge, EvalConfig(device="cuda"), "cuda") == 1
    assert _calls_per_batch(tiny, EvalConfig(device="cuda", input_sets=4), "cuda") == 4
    # more input sets fill the 20 ms batch of a launch-bound task (0.05 ms a call: 400 calls), up to what is asked
    assert _calls_per_batch(tiny, EvalConfig(device="cuda", input_sets=256), "cuda") == 256
    assert _calls_per_batch(tiny, EvalConfig(device="cuda", input_sets=1000), "cuda") == 400
    # a memory-bound built-in task on an H200 (2 GiB in, 2 GiB out, 1 ms a call): 20 calls would fill the batch's
    # time and 11 fit the free-memory share, but two workers holding 11 each would be tight (memory given back and
    # taken again between batches, on which such a kernel ran 6-20% slower): the batch is cut to 9 to stay out of it
    from dataclasses import replace

    from cudal1.harness.reference_side import ReferenceSide
    h200 = WorkerReport("setup", "x", call_ms=1.0, set_bytes=2 * gib, out_bytes=2 * gib, free_bytes=130 * gib,
                        peak_bytes=4 * gib, model_bytes=0, environment={"gpu_memory_gib": 139.7})
    assert _calls_per_batch(h200, EvalConfig(device="cuda"), "cuda") == 9
    assert not ReferenceSide(None, None, h200, 9, [1.0], "cuda").tight
    assert ReferenceSide(None, None, h200, 11, [1.0], "cuda").tight
    assert _calls_per_batch(replace(h200, environment={}), EvalConfig(device="cuda"), "cuda") == 11  # size unknown

    # a task one call of which is already too much stays at one call, tight
    big = replace(h200, set_bytes=40 * gib, out_bytes=10 * gib)
    assert _calls_per_batch(big, EvalConfig(device="cuda"), "cuda") == 1
    assert ReferenceSide(None, None, big, 1, [1.0], "cuda").tight
    # CPU: a fast task's batch holds many calls (its messages and the worker's stop are spread over them), within
    # the CPU's memory share; a slow one's few
    assert _calls_per_batch(tiny, EvalConfig(device="cpu"), "cpu") == 32
    big = WorkerReport("setup", "x", call_ms=0.05, set_bytes=32 << 20, out_bytes=32 << 20,
                       leaves=[{"kind": "tensor", "dtype": "float32", "shape": [8 << 20]}])  # too large to commit
    assert _calls_per_batch(big, EvalConfig(device="cpu"), "cpu") == 4
    assert _calls_per_batch(huge, EvalConfig(device="cpu"), "cpu") == 1


def test_cpu_batches_are_cut_to_be_committed():
    """A CPU task whose outputs can be committed gets few enough calls a batch that they are: relu at 256 x 4096
    (4 MiB out, 0.6 ms a call) had 23 calls, 92 MiB of outputs, over COMMIT_MAX_BYTES, so its digests (13 ms a call)
    ran on the parent's clock and an honest copy of the reference read 0.31x on the 2-core CPU (issue 40)."""
    from cudal1.harness import EvalConfig
    from cudal1.harness.protocol import WorkerReport
    from cudal1.harness.reference_side import COMMIT_MAX_BYTES, ReferenceSide
    from cudal1.harness.reference_side import calls_per_batch as _calls_per_batch

    leaf = {"kind": "tensor", "dtype": "float32", "shape": [256, 4096]}
    relu = WorkerReport("setup", "x", call_ms=0.35, set_bytes=4 << 20, out_bytes=4 << 20, leaves=[leaf])
    n = _calls_per_batch(relu, EvalConfig(device="cpu"), "cpu")
    assert n == COMMIT_MAX_BYTES // (4 << 20) == 16
    assert ReferenceSide(None, None, relu, n, [1.0], "cpu").commit
    assert not ReferenceSide(None, None, relu, 23, [1.0], "cpu").commit  # what it had before
    # outputs that cannot be committed (a leaf over the outbox's full-copy size) keep the batch the time asks for
    wide = WorkerReport("setup", "x", call_ms=0.35, set_bytes=4 << 20, out_bytes=24 << 20,
                        leaves=[{"kind": "tensor", "dtype": "float32", "shape": [6 << 20]}])
    assert _calls_per_batch(wide, EvalConfig(device="cpu"), "cpu") == 9  # 256 MiB of inputs and outputs
    # on CUDA nothing is committed and nothing is cut for it
    assert _calls_per_batch(relu, EvalConfig(device="cuda"), "cuda") == 32


# -- the state snapshot of stateful models -----------------------------------------------------------------
class _AliasingLSTMState(torch.nn.Module):
    """KernelBench's LSTM tasks: forward sets ``self.c0 = self.h0`` (the two attributes alias from then on)."""

    def __init__(self) -> None:
        super().__init__()
        self.h0 = torch.full((2,), 1.0)
        self.c0 = torch.full((2,), 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.c0 = self.h0
        return x + self.h0 + self.c0


class _InPlaceState(torch.nn.Module):
    """A state updated in place (its storage is what a captured CUDA graph reads): restored in place."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = torch.zeros(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden.add_(x)
        return self.hidden.clone()


def test_a_restored_snapshot_does_not_write_through_an_alias_made_after_it():
    """An in-place restore of ``c0`` after ``c0 = h0`` would write 2.0 into ``h0``: the reference would then compute
    with values no candidate can know (every LSTM candidate of KernelBench failed against it)."""
    from cudal1.harness.models import StateSnapshot

    m = _AliasingLSTMState()
    snap = StateSnapshot(m)
    m(torch.zeros(2))
    snap.restore()
    assert m.h0.tolist() == [1.0, 1.0] and m.c0.tolist() == [2.0, 2.0] and m.c0 is not m.h0
    assert m(torch.zeros(2)).tolist() == [2.0, 2.0]


def test_a_state_updated_in_place_is_restored_in_its_own_storage():
    from cudal1.harness.models import StateSnapshot

    m = _InPlaceState()
    storage = m.hidden.data_ptr()
    snap = StateSnapshot(m)
    assert m(torch.ones(2)).tolist() == [1.0, 1.0] and m(torch.ones(2)).tolist() == [2.0, 2.0]
    snap.restore()
    assert m.hidden.data_ptr() == storage and m.hidden.tolist() == [0.0, 0.0]
    assert m(torch.ones(2)).tolist() == [1.0, 1.0]
