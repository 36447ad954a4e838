"""The timing phase of an evaluation (inside the worker), with the anti-caching rules:

* input values are new on every round: each input set is redrawn (the task's own ``get_inputs`` with a
  new seed) before it is used again, alternately copied into the same buffers (same pointers, new
  values: defeats caches keyed on pointers or shapes) and replaced by new buffers (defeats caches keyed
  on call counts or object identity);
* the outputs of timed calls are compared with the reference's output of the same round in a random
  tenth of the rounds (at least one per bucket, the first and the last), with the task's tolerance, and
  in those rounds the inputs are checked for writes (redrawn from their seed and compared bit for bit);
* the candidate's bindings and backend switches are checked after each checked round.

Statistics and the protocol itself: :mod:`cudal1.harness.timing`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import torch

from . import integrity
from .baselines import BaselineError, reference_runner
from .compare import compare_outputs
from .environment import ClockMonitor
from .timing import choose_rounds, measure_pairs, summarise

if TYPE_CHECKING:
    from .runner import Evaluation

CHECK_FRACTION = 0.10


def _nbytes(args: list[Any]) -> int:
    return sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor))


def _input_set_count(wanted: int, device: torch.device, set_bytes: int) -> int:
    if device.type != "cuda" or set_bytes == 0:
        return wanted
    free, _total = torch.cuda.mem_get_info(device)
    return max(1, min(wanted, int(0.25 * free // max(set_bytes, 1))))


def time_pair(ev: Evaluation) -> None:
    """Measure reference (in the configured baseline mode) against candidate; fill ``ev.out``."""
    from .runner import Verdict, exc_line, make_inputs

    cfg, device, seed = ev.cfg, ev.device, ev.seed
    first = make_inputs(ev.inp_mod, seed + 7919, device)
    n_sets = _input_set_count(cfg.input_sets, device, _nbytes(first))
    set_seed = [seed + 7919 * (k + 1) for k in range(n_sets)]
    sets = [first] + [make_inputs(ev.inp_mod, set_seed[k], device) for k in range(1, n_sets)]
    try:
        ref_fn = reference_runner(ev.reference, cfg.baseline, sets, device)
    except BaselineError as e:
        raise Verdict("runtime_error", str(e), ("baseline_failed",)) from e
    in_place_only = cfg.baseline == "cudagraph"  # captured graphs read fixed buffers
    draw = [0]

    def inputs_for_round(r: int) -> list[Any]:
        k = r % n_sets
        if r >= n_sets:  # this set was used before: new values before it is used again
            draw[0] += 1
            set_seed[k] = seed + 104729 + draw[0]
            if in_place_only or (r // n_sets) % 2 == 1:
                new = make_inputs(ev.inp_mod, set_seed[k], device)
                for old, fresh in zip(sets[k], new, strict=True):
                    if isinstance(old, torch.Tensor):
                        old.copy_(fresh)
                del new
            else:
                sets[k] = []  # free the old buffers first
                sets[k] = make_inputs(ev.inp_mod, set_seed[k], device)
        return sets[k]

    def inputs_intact(k: int) -> bool:
        again = make_inputs(ev.inp_mod, set_seed[k], device)
        return all(not isinstance(a, torch.Tensor) or torch.equal(a, b) for a, b in zip(again, sets[k], strict=True))

    def cand_fn(*a: Any) -> Any:
        return ev.candidate(*a)

    if cfg.baseline != "eager":
        # torch.compile's first calls start compile-worker threads of the harness's own: count them into the
        # thread baseline before the candidate runs again (its own threads were checked after each of its calls)
        before = integrity.live_threads()
        for args in sets[:2]:
            try:
                del_me = ref_fn(*args)
            except Exception as e:  # noqa: BLE001
                raise Verdict("runtime_error", f"the reference failed in baseline {cfg.baseline!r}: {exc_line(e)}",
                              ("baseline_failed",)) from e
            del del_me
        ev.sync()
        ev.threads0 += max(0, integrity.live_threads() - before)

    # warm-up, which also estimates the per-call time
    timed_total_ms = 0.0
    est = (0.0, 0.0)
    for i in range(max(cfg.warmup, 1)):
        args = sets[i % n_sets]
        try:
            ms_r, o = ev.timer.time_call(ref_fn, args)
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"the reference failed in baseline {cfg.baseline!r}: {exc_line(e)}",
                          ("baseline_failed",)) from e
        del o
        try:
            ms_c, o = ev.timer.time_call(cand_fn, args)
        except BaseException as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"ModelNew.forward raised during warm-up: {exc_line(e)}") from e
        del o
        est = (ms_r, ms_c)
        timed_total_ms += ms_r + ms_c
    ev.guard("during warm-up")
    rounds = choose_rounds(sum(est), cfg.time_budget_s, cfg.min_rounds, cfg.max_rounds, cfg.buckets)
    rng = random.Random(seed)
    check_rng = random.Random(seed ^ 0x5EED)
    attempts: list[dict[str, Any]] = []
    checked = [0]

    def on_round(r: int, outs: dict[str, Any]) -> None:
        if r not in to_check:
            return
        checked[0] += 1
        cmp = compare_outputs(outs["cand"], outs["ref"], rtol=cfg.rtol, atol=cfg.atol)
        if not cmp.ok:
            raise Verdict("incorrect", f"output of the timed call in round {r + 1} differs from the reference's "
                          f"on the same inputs: {cmp.reason}", ("timed_output_mismatch",))
        del outs["cand"], outs["ref"]
        if not inputs_intact(r % n_sets):
            raise Verdict("rejected", f"inputs changed during timed round {r + 1}; inputs must not be mutated",
                          ("input_mutated",))
        ev.guard(f"timed round {r + 1}", check_threads=False)

    summary = None
    clocks: dict[str, Any] = {}
    for attempt in range(cfg.attempts):
        per_bucket = rounds // cfg.buckets
        to_check = {0, rounds - 1} | {b * per_bucket + check_rng.randrange(per_bucket) for b in range(cfg.buckets)}
        to_check |= {r for r in range(rounds) if check_rng.random() < CHECK_FRACTION}
        monitor = ClockMonitor(device)
        with monitor:
            try:
                times = measure_pairs(ev.timer, ref_fn, cand_fn, inputs_for_round, rounds, rng, on_round=on_round)
            except Verdict:
                raise
            except BaseException as e:  # noqa: BLE001
                raise Verdict("runtime_error", f"a timed call raised: {exc_line(e)}") from e
        ev.guard("after timing")
        timed_total_ms += sum(times.ref) + sum(times.cand)
        summary = summarise(times, cfg.buckets, cfg.spread_limit, seed=seed + attempt)
        clocks = monitor.summary()
        attempts.append({"ref_spread": summary.ref_spread, "cand_spread": summary.cand_spread,
                         "throttled": clocks.get("throttled", False)})
        if summary.stable and not clocks.get("throttled", False):
            break
    assert summary is not None
    if not summary.stable:
        ev.flags.append("timing_unstable")
    if clocks.get("throttled"):
        ev.flags.append("gpu_throttled")
    out = ev.out
    out["speedup"] = summary.speedup
    out["speedup_ci"] = list(summary.ci)
    out["ref_ms"] = summary.ref_ms
    out["cand_ms"] = summary.cand_ms
    out["timing"] = {**summary.to_dict(), "attempts": attempts, "input_sets": n_sets, "buckets": cfg.buckets,
                     "warmup": cfg.warmup, "baseline": cfg.baseline, "timed_s": timed_total_ms / 1000.0,
                     "rounds_checked": checked[0], "input_draws": draw[0]}
    out["environment"]["clocks"] = clocks
    if device.type == "cuda":
        out.setdefault("memory", {})["harness_peak_bytes"] = int(torch.cuda.max_memory_allocated(device))
