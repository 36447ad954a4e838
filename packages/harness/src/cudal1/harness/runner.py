"""One evaluation, as it runs inside a worker process: load, check correctness, time.

The parent process never runs candidate code; it gets the dict this module returns through the worker
protocol (:mod:`cudal1.harness.worker`) and turns it into an :class:`~cudal1.harness.types.EvalResult`.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .baselines import BaselineError, reference_runner
from .buildcache import extension_snapshot
from .compare import compare_outputs
from .config import EvalConfig
from .environment import ClockMonitor, device_info
from .loading import CandidateLoadError, load_candidate, load_task_copy
from .params import randomise_, share_parameters
from .timing import Timer, choose_rounds, measure_pairs, summarise

Send = Callable[[dict[str, Any]], None]


class Verdict(Exception):
    """Ends an evaluation early with a status and reason."""

    def __init__(self, status: str, reason: str, flags: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.flags = flags


def _exc_line(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    for fr in reversed(tb):
        if "cudal1_candidate_" in fr.filename:
            where = f" (candidate line {fr.lineno})"
            break
    msg = str(e).strip().splitlines()[0][:400] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}{where}"


def _to_device(x: Any, device: torch.device) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, device) for v in x)
    return x


def _clone(args: list[Any]) -> list[Any]:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def make_inputs(inputs_module: Any, seed: int, device: torch.device) -> list[Any]:
    """Inputs from the pristine task copy, drawn under ``seed`` directly on ``device``."""
    torch.manual_seed(seed)
    with torch.device(device):
        args = inputs_module.get_inputs()
    return [_to_device(a, device) for a in args]


def _nbytes(args: list[Any]) -> int:
    return sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor))


def _construct(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> nn.Module:
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init_inputs)
    if not isinstance(model, nn.Module):
        raise TypeError(f"{cls.__name__}(...) returned {type(model).__name__}, not an nn.Module")
    return model.to(device)


def evaluate_in_worker(job: dict[str, Any], send: Send) -> dict[str, Any]:
    """Run one evaluation job. Returns the fields of an EvalResult (the parent adds its own)."""
    cfg = EvalConfig.from_dict(job["config"])
    device = torch.device(job["device"])
    workdir = Path(job["workdir"])
    out: dict[str, Any] = {"status": "ok", "reason": "", "flags": []}
    flags: list[str] = out["flags"]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    if device.type == "cuda":
        torch.cuda.set_device(device)
    elif cfg.cpu_threads:
        torch.set_num_threads(cfg.cpu_threads)
    out["environment"] = device_info(device)
    seed = cfg.seed
    try:
        with torch.no_grad():
            _evaluate(job, cfg, device, workdir, seed, out, flags, send)
    except Verdict as v:
        out["status"], out["reason"] = v.status, v.reason
        flags.extend(v.flags)
    if out["status"] != "ok":
        out.pop("speedup", None)
    return out


def _evaluate(
    job: dict[str, Any],
    cfg: EvalConfig,
    device: torch.device,
    workdir: Path,
    seed: int,
    out: dict[str, Any],
    flags: list[str],
    send: Send,
) -> None:
    # 1. The task: two pristine copies (reference, inputs); the reference model is built and randomised
    #    before any candidate code runs.
    try:
        ref_mod = load_task_copy(job["task_source"], workdir, "ref")
        inp_mod = load_task_copy(job["task_source"], workdir, "inputs")
        init_inputs = list(inp_mod.get_init_inputs())
        reference = _construct(ref_mod.Model, init_inputs, seed, device)
        randomise_(reference, seed)
        reference.eval()
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"the task itself failed to load or build its Model: {_exc_line(e)}",
                      ("task_error",)) from e

    # 2. The candidate, in its own namespace.
    send({"type": "phase", "phase": "load"})
    ext_dir = job.get("extensions_dir")
    before = extension_snapshot(ext_dir) if ext_dir else {}
    t0 = time.perf_counter()
    try:
        cand_cls = load_candidate(job["candidate_source"], workdir)
    except CandidateLoadError as e:
        raise Verdict("compile_error", str(e)) from e
    load_s = time.perf_counter() - t0
    after = extension_snapshot(ext_dir) if ext_dir else {}
    out["build"] = {
        "import_s": round(load_s, 3),
        "built_now": any(after.get(k) != v for k, v in before.items()) or bool(set(after) - set(before)),
        "extensions": sorted(after),
    }
    try:
        candidate = _construct(cand_cls, init_inputs, seed, device)
    except BaseException as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew(*get_init_inputs()) failed: {_exc_line(e)}") from e
    try:
        unmapped = share_parameters(reference, candidate)
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"loading the reference's parameters into ModelNew failed: {_exc_line(e)}") from e
    if unmapped:
        out["unmapped_parameters"] = unmapped
    candidate.eval()
    send({"type": "phase", "phase": "run"})

    # 3. Correctness: fresh seed per trial; candidate, then reference, then candidate again.
    worst_abs = worst_rel = 0.0
    rtol = atol = None
    for i in range(cfg.trials):
        args = make_inputs(inp_mod, seed + 1000 * (i + 1), device)
        c1 = _call_candidate(candidate, _clone(args), f"trial {i + 1}")
        ref_out = reference(*_clone(args))
        c2 = _call_candidate(candidate, _clone(args), f"trial {i + 1} (second call)")
        for label, c in (("", c1), (" (second call)", c2)):
            cmp = compare_outputs(c, ref_out, rtol=cfg.rtol, atol=cfg.atol)
            if not cmp.ok:
                raise Verdict("incorrect", f"trial {i + 1}{label}: {cmp.reason}")
            worst_abs = max(worst_abs, cmp.max_abs_err)
            worst_rel = max(worst_rel, cmp.max_rel_err)
            rtol, atol = cmp.rtol, cmp.atol
        del c1, c2, ref_out, args
    out["correctness"] = {
        "trials": cfg.trials,
        "max_abs_err": worst_abs,
        "max_rel_err": worst_rel,
        "rtol": rtol,
        "atol_last": atol,
    }

    # 4. Timing.
    _time(inp_mod, reference, candidate, cfg, device, seed, out, flags)


def _call_candidate(candidate: nn.Module, args: list[Any], where: str) -> Any:
    try:
        return candidate(*args)
    except BaseException as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew.forward raised in {where}: {_exc_line(e)}") from e


def _input_set_count(cfg: EvalConfig, device: torch.device, set_bytes: int) -> int:
    if device.type != "cuda" or set_bytes == 0:
        return cfg.input_sets
    free, _total = torch.cuda.mem_get_info(device)
    fit = int(0.25 * free // max(set_bytes, 1))
    return max(1, min(cfg.input_sets, fit))


def _time(
    inp_mod: Any,
    reference: nn.Module,
    candidate: nn.Module,
    cfg: EvalConfig,
    device: torch.device,
    seed: int,
    out: dict[str, Any],
    flags: list[str],
) -> None:
    first = make_inputs(inp_mod, seed + 7919, device)
    n_sets = _input_set_count(cfg, device, _nbytes(first))
    input_sets = [first] + [make_inputs(inp_mod, seed + 7919 * (k + 1), device) for k in range(1, n_sets)]
    try:
        ref_fn = reference_runner(reference, cfg.baseline, input_sets, device)
    except BaselineError as e:
        raise Verdict("runtime_error", str(e), ("baseline_failed",)) from e
    l2 = out["environment"].get("l2_bytes") or 0
    timer = Timer(device, l2_flush_bytes=2 * int(l2) if device.type == "cuda" else 0)

    def cand_fn(*a: Any) -> Any:
        return candidate(*a)

    # warm-up, which also estimates the per-call time
    est = {"ref": 0.0, "cand": 0.0}
    for i in range(max(cfg.warmup, 1)):
        args = input_sets[i % n_sets]
        try:
            ms_r, o = timer.time_call(ref_fn, args)
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"the reference failed in baseline {cfg.baseline!r}: {_exc_line(e)}",
                          ("baseline_failed",)) from e
        del o
        try:
            ms_c, o = timer.time_call(cand_fn, args)
        except BaseException as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"ModelNew.forward raised during warm-up: {_exc_line(e)}") from e
        del o
        est["ref"], est["cand"] = ms_r, ms_c
    rounds = choose_rounds(est["ref"] + est["cand"], cfg.time_budget_s, cfg.min_rounds, cfg.max_rounds, cfg.buckets)
    rng = random.Random(seed)
    attempts: list[dict[str, Any]] = []
    summary = None
    clocks: dict[str, Any] = {}
    for attempt in range(cfg.attempts):
        monitor = ClockMonitor(device)
        with monitor:
            try:
                times = measure_pairs(timer, ref_fn, cand_fn, input_sets, rounds, rng)
            except BaseException as e:  # noqa: BLE001
                raise Verdict("runtime_error", f"a timed call raised: {_exc_line(e)}") from e
        summary = summarise(times, cfg.buckets, cfg.spread_limit, seed=seed + attempt)
        clocks = monitor.summary()
        attempts.append({"ref_spread": summary.ref_spread, "cand_spread": summary.cand_spread,
                         "throttled": clocks.get("throttled", False)})
        if summary.stable and not clocks.get("throttled", False):
            break
    assert summary is not None
    if not summary.stable:
        flags.append("timing_unstable")
    if clocks.get("throttled"):
        flags.append("gpu_throttled")
    out["speedup"] = summary.speedup
    out["speedup_ci"] = list(summary.ci)
    out["ref_ms"] = summary.ref_ms
    out["cand_ms"] = summary.cand_ms
    out["timing"] = {**summary.to_dict(), "attempts": attempts, "input_sets": n_sets, "buckets": cfg.buckets,
                     "warmup": cfg.warmup, "baseline": cfg.baseline}
    out["environment"]["clocks"] = clocks
    if device.type == "cuda":
        out["environment"]["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
