"""Evaluate many (task, candidate) pairs: builds in parallel on CPU workers, then one timing worker per
GPU (or one on the CPU), a fresh process per pair with the next one already starting.

    pool = EvalPool(EvalConfig(device="cuda"))
    results = pool.map([(task, cand), ...], store=ResultStore("run.sqlite"), on_result=print)

With a store, pairs already in it (same task, candidate and result-relevant config) are not redone: an
interrupted run resumes. Each result is written to the store as soon as it exists.
"""

from __future__ import annotations

import ast
import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import buildcache
from .config import EvalConfig
from .sandbox import JobOutcome, WorkerProcess
from .types import STATUSES, Candidate, EvalResult, Task

Pair = tuple[Task, Candidate]


def probe_cuda_devices() -> list[dict[str, Any]]:
    """GPUs visible to a fresh process: index, name, compute capability. [] without CUDA.

    Runs in a subprocess so that this (parent) process never creates a CUDA context."""
    code = (
        "import json, torch\n"
        "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
        "print(json.dumps([{'index': i, 'name': torch.cuda.get_device_name(i),"
        " 'cc': '%d.%d' % torch.cuda.get_device_capability(i)} for i in range(n)]))\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return []


def _toolchain() -> str:
    import torch

    return f"torch={torch.__version__};cuda={torch.version.cuda};py={sys.version_info[:2]}"


class _Slot:
    """One timing lane: a device and up to ``spares`` workers started ahead.

    A worker's start (Python, torch, dynamo, CUDA context) takes longer than many pairs, so one spare is
    not enough to hide it: with ``spares`` = k the start-up is hidden once pairs take longer than 1/k of it.
    Spares launch nothing on the GPU; each holds a small CUDA context."""

    def __init__(self, device: str, env: dict[str, str], spares: int) -> None:
        self.device = device
        self.env = env
        self.spares = max(0, spares)
        self._spares: collections.deque[WorkerProcess] = collections.deque()

    def take_worker(self) -> WorkerProcess:
        return self._spares.popleft() if self._spares else WorkerProcess(self.env)

    def prestart(self, remaining: int) -> None:
        """Top the spares up, but never beyond the ``remaining`` pairs this lane may still run."""
        while len(self._spares) < min(self.spares, remaining):
            self._spares.append(WorkerProcess(self.env))

    def close(self) -> None:
        while self._spares:
            w = self._spares.popleft()
            w.kill()
            w.cleanup()


class EvalPool:
    """Evaluates pairs concurrently: one lane per GPU (``CUDA_VISIBLE_DEVICES`` pins it), or ``cpu_lanes``
    lanes on the CPU. Builds (``load_inline`` candidates) run first on ``build_workers`` CPU processes.

    Args:
        config: evaluation settings (device, baseline, limits ...); default ``EvalConfig()``.
        gpus: GPU indices to use with a CUDA config (default: all visible).
        cpu_lanes: concurrent CPU evaluations (default 1: concurrent CPU timing would interfere).
        build_workers: concurrent build processes (default: CPU count, at most 8).
        spares: workers started ahead per lane (default 3 on a GPU lane, 0 on a CPU lane, where their
            start-up would share the cores with the timing of the current pair).
        keep_warm: keep each lane's spares started between :meth:`map` calls (for a long-lived pool fed in
            batches, e.g. a trainer's reward function: otherwise each call's first pair waits for a cold
            worker start, several seconds on a GPU). Call :meth:`close` when done.
    """

    def __init__(
        self,
        config: EvalConfig | None = None,
        *,
        gpus: Sequence[int] | None = None,
        cpu_lanes: int = 1,
        build_workers: int | None = None,
        spares: int | None = None,
        keep_warm: bool = False,
    ) -> None:
        self.config = config or EvalConfig()
        self.keep_warm = keep_warm
        self.cache_root = self.config.resolved_cache_dir()
        self.cache_root.mkdir(parents=True, exist_ok=True)
        self.arch_list = ""
        base_env = {
            "TRITON_CACHE_DIR": str(self.cache_root / "triton"),
            "CUPY_CACHE_DIR": str(self.cache_root / "cupy"),
        }
        if self.config.is_cuda:
            found = probe_cuda_devices()
            if not found:
                raise RuntimeError("config asks for device 'cuda' but no CUDA GPU is visible; use device 'cpu'")
            if ":" in self.config.device and gpus is None:
                gpus = [int(self.config.device.split(":")[1])]
            use = list(gpus) if gpus is not None else [d["index"] for d in found]
            bad = [g for g in use if g not in {d["index"] for d in found}]
            if bad:
                raise RuntimeError(f"GPU index {bad} not visible (visible: {[d['index'] for d in found]})")
            self.arch_list = ";".join(sorted({d["cc"] for d in found if d["index"] in use}))
            base_env["TORCH_CUDA_ARCH_LIST"] = self.arch_list
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            physical = visible.split(",") if visible else None
            self.slots = [
                _Slot("cuda:0", {**base_env, "CUDA_VISIBLE_DEVICES": physical[g] if physical else str(g),
                                 "CUDAL1_WARM_CUDA": "1"}, 3 if spares is None else spares)
                for g in use
            ]
        else:
            self.slots = [_Slot("cpu", {**base_env, "CUDA_VISIBLE_DEVICES": ""}, spares or 0)
                          for _ in range(max(1, cpu_lanes))]
        self.build_env = {**base_env, "CUDA_VISIBLE_DEVICES": ""}
        if self.arch_list:
            self.build_env["TORCH_CUDA_ARCH_LIST"] = self.arch_list
        self.build_workers = build_workers or max(1, min(8, os.cpu_count() or 1))
        self.toolchain = _toolchain()

    # -- builds -----------------------------------------------------------------------------------
    def build_key(self, candidate: Candidate) -> str:
        return buildcache.build_key(candidate.source, self.toolchain, self.arch_list)

    def _build_one(self, candidate: Candidate) -> dict[str, Any]:
        key = self.build_key(candidate)
        rec = buildcache.read_record(self.cache_root, key)
        if rec is not None:
            return rec
        w = WorkerProcess(self.build_env)
        ext = buildcache.extensions_dir(self.cache_root, key)
        job = {"kind": "build", "candidate_source": candidate.source, "extensions_dir": str(ext),
               "env": {"TORCH_EXTENSIONS_DIR": str(ext)}}
        out = w.run_job(job, self.config.compile_timeout_s, self.config.compile_timeout_s)
        w.cleanup()
        if out.result is None:
            status = "failed" if out.ended == "timeout" else "not_built"
            rec = {"status": status, "reason": f"build {out.ended}: {out.detail}", "seconds": out.wall_s,
                   "log_tail": out.log_tail[-1500:]}
        else:
            rec = {**out.result, "log_tail": out.log_tail[-1500:]}
        if rec.get("status") in ("ok", "failed"):
            buildcache.write_record(self.cache_root, key, rec)
        return rec

    def build_all(self, candidates: Iterable[Candidate]) -> dict[str, dict[str, Any]]:
        """Compile every candidate that builds extensions, in parallel, once per content key."""
        todo: dict[str, Candidate] = {}
        for c in candidates:
            if buildcache.needs_build(c.source) and not syntax_problem(c.source):
                todo.setdefault(self.build_key(c), c)
        if not todo:
            return {}
        with ThreadPoolExecutor(self.build_workers) as ex:
            recs = list(ex.map(self._build_one, todo.values()))
        return dict(zip(todo.keys(), recs, strict=True))

    # -- evaluation -------------------------------------------------------------------------------
    def _job(self, task: Task, candidate: Candidate, device: str, key: str | None) -> dict[str, Any]:
        job: dict[str, Any] = {
            "kind": "evaluate",
            "task_source": task.source,
            "candidate_source": candidate.source,
            "config": self.config.to_dict(),
            "device": device,
            "env": {},
        }
        if key is not None:
            ext = buildcache.extensions_dir(self.cache_root, key)
            ext.mkdir(parents=True, exist_ok=True)
            buildcache.clear_stale_locks(ext)
            job["extensions_dir"] = str(ext)
            job["env"]["TORCH_EXTENSIONS_DIR"] = str(ext)
        return job

    def _run_on_slot(self, slot: _Slot, task: Task, candidate: Candidate, remaining: int = 0) -> EvalResult:
        t0 = time.monotonic()
        base = {"task": task.name, "baseline": self.config.baseline, "device": self.config.device.split(":")[0],
                "task_hash": task.hash, "candidate_hash": candidate.hash}
        problem = syntax_problem(candidate.source)
        if problem:  # no worker needed to see that (a worker start costs seconds; policies write many of these)
            return EvalResult(status="compile_error", reason=problem, wall_s=time.monotonic() - t0, **base)
        key = self.build_key(candidate) if buildcache.needs_build(candidate.source) else None
        if key is not None:
            rec = buildcache.read_record(self.cache_root, key)
            if rec is not None and rec.get("status") == "failed":
                return EvalResult(status="compile_error", reason=f"build failed (cached): {rec.get('reason', '')}",
                                  build={"key": key, "cached_failure": True},
                                  log_tail=rec.get("log_tail", ""), wall_s=time.monotonic() - t0, **base)
        worker = slot.take_worker()
        # the next pairs' processes start while this one runs (for the next call too when keeping warm)
        slot.prestart(slot.spares if self.keep_warm else remaining)
        try:
            outcome = worker.run_job(self._job(task, candidate, slot.device, key), self.config.compile_timeout_s,
                                     self.config.run_timeout_s)
        finally:
            worker.cleanup()
        res = assemble_result(outcome, base, time.monotonic() - t0)
        if key is not None:
            res = res.replace(build={**res.build, "key": key})
        return res

    def check_tasks(self, tasks: Sequence[Task], on_result: Callable[[int, dict[str, Any]], None] | None = None
                    ) -> list[dict[str, Any]]:
        """Task-level degeneracy checks (constant output, ignored input or weight), one worker per task.

        Returns one dict per task: ``{"task", "status": "ok"|"degenerate"|"task_error", "findings": [...]}``."""
        out: list[dict[str, Any]] = []
        for i, task in enumerate(tasks):
            slot = self.slots[0]
            w = slot.take_worker()
            slot.prestart(len(tasks) - i - 1)
            job = {"kind": "check_task", "task_source": task.source, "device": slot.device, "seed": self.config.seed,
                   "env": {}}
            res = w.run_job(job, self.config.compile_timeout_s + self.config.run_timeout_s, self.config.run_timeout_s,
                            first_phase="check")
            w.cleanup()
            if res.result is None:
                rec = {"status": "task_error", "findings": [f"check {res.ended}: {res.detail}"]}
            else:
                rec = {"status": str(res.result.get("status")), "findings": list(res.result.get("findings", []))}
            rec = {"task": task.name, **rec}
            out.append(rec)
            if on_result:
                on_result(i, rec)
        self.slots[0].close()
        return out

    def close(self) -> None:
        """Stop the spare workers of every lane (those kept warm included); the pool can still be used."""
        for slot in self.slots:
            slot.close()

    def __enter__(self) -> EvalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def evaluate(self, task: Task, candidate: Candidate) -> EvalResult:
        """Evaluate one pair (building first if needed)."""
        return self.map([(task, candidate)])[0]

    def map(
        self,
        pairs: Sequence[Pair],
        *,
        store: Any | None = None,
        run: str = "",
        on_result: Callable[[int, EvalResult], None] | None = None,
    ) -> list[EvalResult]:
        """Evaluate pairs; results in input order. ``on_result(index, result)`` fires as each finishes.

        With ``store`` (a :class:`~cudal1.harness.store.ResultStore`), finished pairs are read back instead
        of re-run, and each new result is stored the moment it exists, under ``run``.
        """
        results: list[EvalResult | None] = [None] * len(pairs)
        todo: list[int] = []
        for i, (task, cand) in enumerate(pairs):
            prev = store.lookup(task, cand, self.config) if store is not None else None
            if prev is not None:
                results[i] = prev
                if on_result:
                    on_result(i, prev)
            else:
                todo.append(i)
        self.build_all(pairs[i][1] for i in todo)
        q: queue.Queue[int] = queue.Queue()
        for i in todo:
            q.put(i)
        lock = threading.Lock()
        errors: list[BaseException] = []

        def lane(slot: _Slot) -> None:
            try:
                while True:
                    try:
                        i = q.get_nowait()
                    except queue.Empty:
                        return
                    task, cand = pairs[i]
                    res = self._run_on_slot(slot, task, cand, remaining=q.qsize())
                    with lock:
                        if store is not None:
                            store.add(res, task, cand, self.config, run=run)
                        results[i] = res
                        if on_result:
                            on_result(i, res)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
                slot.close()
            finally:
                if not self.keep_warm:
                    slot.close()

        if todo:
            threads = [threading.Thread(target=lane, args=(s,), daemon=True) for s in self.slots[: len(todo)]]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        return [r for r in results if r is not None]


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


def assemble_result(outcome: JobOutcome, base: dict[str, Any], wall_s: float) -> EvalResult:
    """Turn a worker's outcome into an EvalResult, trusting only well-formed fields.

    The parent's own clock bounds the worker's claims: if the reported timed work (rounds x per-call
    times) exceeds the time the parent saw the worker run, the result is rejected."""
    tail = outcome.log_tail[-2000:]
    if outcome.result is None:
        if outcome.ended == "forged":
            return EvalResult(status="rejected", reason=outcome.detail, flags=("forged_message",), log_tail=tail,
                              wall_s=wall_s, **base)
        status = "timeout" if outcome.ended == "timeout" else "runtime_error"
        return EvalResult(status=status, reason=outcome.detail, log_tail=tail, wall_s=wall_s, **base)
    r = outcome.result
    status = r.get("status")
    if status not in STATUSES:
        return EvalResult(status="runtime_error", reason=f"worker sent an invalid status {status!r}",
                          flags=("harness_error",), log_tail=tail, wall_s=wall_s, **base)
    flags = tuple(str(f) for f in r.get("flags", []) if isinstance(f, str))
    reason = str(r.get("reason", ""))
    speedup = r.get("speedup") if status == "ok" else None
    timing = r.get("timing", {}) if isinstance(r.get("timing"), dict) else {}
    if status == "ok":
        if not isinstance(speedup, (int, float)) or not (speedup > 0):
            return EvalResult(status="runtime_error", reason="worker reported ok without a valid speedup",
                              flags=(*flags, "harness_error"), log_tail=tail, wall_s=wall_s, **base)
        claimed_s = sum(timing.get("ref_bucket_ms", [])) / max(len(timing.get("ref_bucket_ms", [])), 1)
        claimed_s = (claimed_s + (r.get("cand_ms") or 0.0)) * timing.get("rounds", 0) / 1000.0
        if outcome.run_s and claimed_s > outcome.run_s * 1.05 + 0.05:
            return EvalResult(status="rejected",
                              reason=f"reported timed work ({claimed_s:.3f} s) exceeds the {outcome.run_s:.3f} s the "
                                     "parent saw the worker run: the timing figures are not credible",
                              flags=(*flags, "timing_forged"), log_tail=tail, wall_s=wall_s, **base)
    ci = r.get("speedup_ci")
    return EvalResult(
        status=status,
        reason=reason,
        speedup=float(speedup) if speedup is not None else None,
        speedup_ci=(float(ci[0]), float(ci[1])) if status == "ok" and isinstance(ci, list) and len(ci) == 2 else None,
        ref_ms=r.get("ref_ms") if status == "ok" else None,
        cand_ms=r.get("cand_ms") if status == "ok" else None,
        flags=flags,
        correctness=r.get("correctness", {}) or {},
        timing=timing,
        environment={**(r.get("environment", {}) or {}), **({"memory": r["memory"]} if isinstance(r.get("memory"), dict) else {})},
        build=r.get("build", {}) or {},
        uses_custom_kernel=r.get("uses_custom_kernel") if isinstance(r.get("uses_custom_kernel"), bool) else None,
        integrity=r.get("integrity", {}) if isinstance(r.get("integrity"), dict) else {},
        log_tail=tail,
        wall_s=wall_s,
        **base,
    )


def evaluate(task: Task, candidate: Candidate, config: EvalConfig | None = None) -> EvalResult:
    """Evaluate one candidate against its task in a fresh worker process and return the verdict."""
    return EvalPool(config).evaluate(task, candidate)


def default_device() -> str:
    """``cuda`` when a GPU is visible, else ``cpu``."""
    return "cuda" if probe_cuda_devices() else "cpu"


__all__ = ["EvalPool", "evaluate", "probe_cuda_devices", "default_device", "assemble_result"]
