"""The scheduler: many (task, candidate) pairs over the GPUs (or CPU lanes), builds first.

    pool = EvalPool(EvalConfig(device="cuda"))
    results = pool.map([(task, cand), ...], store=ResultStore("run.sqlite"), on_result=print)

Per lane (one GPU, or one CPU lane; ``lanes_per_gpu`` of them on each GPU): pairs of the same task run one after
another beside one clean reference worker for that task (:class:`cudal1.harness.reference_side.ReferenceSide`, set
up once), each candidate in a fresh sandboxed worker (started ahead as a spare). The lanes of one device share a
:class:`~cudal1.harness.gate.DeviceGate`: they set up references, load candidates and check them side by side, and
each timing phase has the device (and the parent) alone. Builds of ``load_inline`` candidates run first, in
parallel, in sandboxed CPU-only workers. With a store, pairs already in it are read back instead of re-run and each
new result is written as soon as it exists (an interrupted run resumes).

The verdict of a pair is made by :mod:`cudal1.harness.pair` and :mod:`cudal1.harness.verdict`; this module
only schedules.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import buildcache, sandbox
from .builds import Builder, toolchain
from .config import EvalConfig
from .devices import default_device, probe_cuda_devices
from .lanes import Lane, LaneSpec, device_lanes
from .library_imports import parent_problem
from .novelty import same_source
from .pair import run_pair
from .process import WorkerGone, kill_all
from .reference_side import ReferenceSide
from .static_checks import analyse
from .syntax import syntax_problem
from .techniques import library_digest
from .template import templates_supported
from .types import Candidate, EvalResult, Task
from .verdict import Failure, Observations, assemble

Pair = tuple[Task, Candidate]


class SandboxUnavailable(RuntimeError):
    """``require_sandbox`` was asked for and no OS sandbox can be made on this machine."""


def default_memory_limit() -> int:
    """Half the machine's memory, at least 8 GiB: what one worker may hold (resident) by default."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 32 << 30
    return max(8 << 30, total // 2)


class EvalPool:
    """Evaluates pairs concurrently: ``lanes_per_gpu`` lanes per GPU (``CUDA_VISIBLE_DEVICES`` pins it), or
    ``cpu_lanes`` lanes on the CPU. Builds (``load_inline`` candidates) run first on ``build_workers`` CPU processes.
    Lanes of one device overlap their work and take turns to time (:mod:`cudal1.harness.gate`).

    Args:
        config: evaluation settings (device, baseline, limits ...); default ``EvalConfig()``.
        gpus: GPU indices to use with a CUDA config (default: all visible).
        lanes_per_gpu: lanes on each GPU (default 1). With more, the lanes overlap all but timing (worker starts,
            reference set-up, loading, correctness, profiling, verdicts, store writes) and each timing phase has
            the GPU alone. Every lane's reference and candidates hold GPU memory at once: a task that fills the
            GPU wants one lane.
        cpus_per_lane: CPU cores pinned to each GPU lane (:func:`~cudal1.harness.lanes.lane_cpus`; default 2).
        cpu_lanes: concurrent CPU evaluations (default 1; more overlap their work, and each timing phase still
            runs alone, but a lane's work shares the cores with the other lanes' processes).
        build_workers: concurrent build processes (default: CPU count, at most 8).
        spares: candidate workers started ahead per lane (default 3 on a GPU lane, 0 on a CPU lane, where
            their start-up would share the cores with the timing of the current pair).
        keep_warm: keep each lane's spares and reference worker between :meth:`map` calls (a trainer's reward
            function calls it in batches). Call :meth:`close` when done.
        fork_workers: fork each candidate's worker, and each task's reference worker, from warm templates instead
            of starting them (:mod:`cudal1.harness.template`: tens of milliseconds instead of seconds; Linux only).
            ``None`` (the default): forked on a CPU pool where templates work, started on a GPU (a forked child
            makes its own CUDA context; on an H100 the same verdicts, 20 pairs per GPU-minute on one lane against 12-14
            started: benchmarks/results/2026-12-07-warm-pools-h100.md). Both sides are forked alike: a forked candidate
            beside a started reference runs the protocol faster than the reference, and the clock check's charge
            leaves that difference to hide work in (benchmarks/results/2026-12-05-forked-references-cpu.md).
        warm_spares: what a GPU lane's spare candidate workers do while they wait: ``"context"`` (the default) make
            their CUDA context; ``"libraries"`` also the first use of the harness's digest kernel, a seeded draw
            and cuBLAS (:func:`cudal1.harness.worker.warm_cuda`), which a fresh candidate's first trial otherwise
            pays (0.93-2.39 s on an H100, benchmarks/results/2026-12-06-pair-breakdown-h100.md). Before the fix
            below, on an H100 it turned four of six wrong or correct candidates into ``runtime_error``
            (benchmarks/results/2026-12-06-first-trial-warm-h100.md): the worker died of SIGSEGV (the GPU test,
            2026-12-06), most likely because seeding its kernel cache rewrote in place the digest kernel's launcher
            library it had loaded while warming; seeding now renames new files over old ones
            (:func:`cudal1.harness.buildcache.seed_cache`), and the GPU test passed on an H100 after it
            (benchmarks/results/2026-12-06-kb-selfrun-after-h100.md, call 5). Not the default until a mixed
            batch has run with it beside ``"context"`` (the same verdicts, and the first trial's gain measured
            again: ``gpu_boundary_run.sh warm``). No effect on a CPU pool.
        hide: paths a candidate must not see even if they lie in a folder its sandbox can read (the JSON
            output file; the store passed to :meth:`map` is hidden anyway).
    Raises:
        SandboxUnavailable: ``config.require_sandbox`` and no OS sandbox can be made here.
        RuntimeError: a CUDA config and no GPU visible.
    """

    def __init__(
        self,
        config: EvalConfig | None = None,
        *,
        gpus: Sequence[int] | None = None,
        lanes_per_gpu: int = 1,
        cpus_per_lane: int = 2,
        cpu_lanes: int = 1,
        build_workers: int | None = None,
        spares: int | None = None,
        keep_warm: bool = False,
        fork_workers: bool | None = None,
        warm_spares: str = "context",
        hide: Sequence[str | Path] = (),
    ) -> None:
        self.config = config or EvalConfig()
        self.keep_warm = keep_warm
        if lanes_per_gpu < 1 or cpus_per_lane < 1 or cpu_lanes < 1:
            raise ValueError(f"lanes_per_gpu ({lanes_per_gpu}), cpus_per_lane ({cpus_per_lane}) and cpu_lanes "
                             f"({cpu_lanes}) must each be at least 1")
        info = sandbox.detect()
        self.sandbox_info = info
        self.sandboxed = info.available
        if not info.available:
            if self.config.require_sandbox:
                raise SandboxUnavailable(f"no OS sandbox for candidate code on this machine: {info.reason}")
            _warn_unsandboxed(info.reason)
        mem = int(self.config.memory_limit_gb * (1 << 30)) if self.config.memory_limit_gb else default_memory_limit()
        self.limits = sandbox.Limits(memory_bytes=mem)
        self.hidden = [Path(p).resolve() for p in hide]
        self.cache_root = self.config.resolved_cache_dir()
        self.cache_root.mkdir(parents=True, exist_ok=True)
        arch_list = ""  # the GPUs' compute capabilities: part of every build's key
        base_env: dict[str, str] = {}
        #: the reference processes' caches (trusted code only): candidate workers get the harness's kernels from it
        self.trusted_cache = self.cache_root / "reference"
        self.reference_env = {"TRITON_CACHE_DIR": str(self.trusted_cache / "triton"),
                              "TORCHINDUCTOR_CACHE_DIR": str(self.trusted_cache / "inductor")}
        spec = LaneSpec(config=self.config, sandboxed=self.sandboxed, limits=self.limits,
                        reference_env=dict(self.reference_env), hidden=lambda: tuple(self.hidden),
                        on_reference=self.record_reference)
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
            arch_list = ";".join(sorted({d["cc"] for d in found if d["index"] in use}))
            base_env["TORCH_CUDA_ARCH_LIST"] = arch_list
            self.lanes = device_lanes(spec, "cuda", use, base_env, lanes_per_gpu=lanes_per_gpu,
                                      cpus_per_lane=cpus_per_lane, spares=3 if spares is None else spares,
                                      fork=bool(fork_workers) and templates_supported(),  # None: started on a GPU
                                      warm_spares=warm_spares)
        else:
            self.lanes = device_lanes(spec, "cpu", [], base_env, lanes_per_gpu=cpu_lanes, spares=spares or 0,
                                      fork=(fork_workers is None or fork_workers) and templates_supported(),
                                      warm_spares=warm_spares)  # checked there; a CPU lane warms nothing
        self.builder = Builder(self.config, self.cache_root, toolchain(), arch_list,
                               {**base_env, "CUDA_VISIBLE_DEVICES": ""}, sandboxed=self.sandboxed, limits=self.limits,
                               hidden=lambda: tuple(self.hidden),
                               workers=build_workers or max(1, min(8, os.cpu_count() or 1)))
        self._stopping = False
        self._store: Any = None
        self._run = ""
        self._store_lock = threading.Lock()

    # -- caches and builds --------------------------------------------------------------------------------
    def build_key(self, candidate: Candidate) -> str:
        """The content key of ``candidate``'s extension build (:class:`~cudal1.harness.builds.Builder`)."""
        return self.builder.key(candidate)

    def kernel_cache(self, candidate: Candidate) -> Path:
        """The persistent Triton/CuPy/inductor cache of this candidate source alone (keyed by its hash, so no
        candidate can plant a kernel that another one loads). A worker gets a copy of it in its own folder
        before the candidate loads (:func:`cudal1.harness.buildcache.seed_cache`) and what it compiled is kept
        after (:func:`cudal1.harness.buildcache.keep_cache`)."""
        return self.cache_root / "kernels" / candidate.hash[:32]

    def build_all(self, candidates: Iterable[Candidate]) -> dict[str, dict[str, Any]]:
        """Compile every candidate that builds extensions, in parallel, once per content key
        (:meth:`cudal1.harness.builds.Builder.build_all`)."""
        return self.builder.build_all(candidates)

    # -- one pair ---------------------------------------------------------------------------------------
    def _run_on_lane(self, lane: Lane, task: Task, candidate: Candidate, remaining: int = 0,
                     next_task: bool = False) -> EvalResult:
        """One pair on ``lane``; ``remaining``: pairs the lane may still run after it; ``next_task``: the lane's
        next pair is of another task (its reference worker starts ahead)."""
        t0 = time.monotonic()
        obs = Observations(task=task.name, task_hash=task.hash, candidate_hash=candidate.hash,
                           baseline=self.config.baseline, device=self.config.device.split(":")[0],
                           sandboxed=self.sandboxed)

        def done() -> EvalResult:
            obs.wall_s = time.monotonic() - t0
            return assemble(obs)

        problem = parent_problem(candidate.source)
        if problem:  # no worker needed to see that (a worker start costs seconds; policies write many of these)
            obs.candidate_failure = Failure("compile_error", problem)
            return done()
        key = self.build_key(candidate) if buildcache.needs_build(candidate.source) else None
        if key is not None:  # a remembered failed build is the candidate's own, like a syntax error
            obs.build["key"] = key
            rec = buildcache.read_record(self.cache_root, key)
            if rec is not None and rec.get("status") == "failed":
                obs.build["cached_failure"] = True
                obs.log_tail = rec.get("log_tail", "")
                obs.candidate_failure = Failure("compile_error", f"build failed (cached): {rec.get('reason', '')}")
                return done()
        if not lane.holds(task):
            lane.settle_previous()  # the last candidate's GPU memory is free before a new reference sets up
            # this pair's candidate worker and the next ones start while the reference sets up (they are ready
            # before it is timed alone: no process makes a CUDA context while another is timed)
            lane.prestart_one()
            lane.prestart(lane.spares if self.keep_warm else remaining + 1)
        side = lane.reference_for(task)
        if next_task and lane.spares > 0:  # never on a CPU lane: its start would share the cores being timed
            lane.prestart_reference()  # the next task's reference worker starts while this pair runs
        if isinstance(side, Failure):
            obs.task_failure = side if side.status == "task_error" else None
            obs.reference_failure = None if side.status == "task_error" else side
            if obs.task_failure is not None:
                obs.flags.add("task_error")
            return done()
        tc = side.setup.task_check
        obs.evidence["task_check"] = tc
        obs.environment = dict(side.setup.environment)
        if tc.get("degenerate"):
            obs.flags.add("task_degenerate")
        if side.stateful:
            obs.flags.add("reference_stateful")
        if side.setup.peak_bytes is not None:
            obs.environment["memory"] = {"task_peak_bytes": side.setup.peak_bytes, "set_bytes": side.setup.set_bytes,
                                         "out_bytes": side.setup.out_bytes, "calls_per_batch": side.n}
        static = analyse(candidate.source)  # after the task: a broken task is never blamed on a candidate
        obs.evidence["static"] = static.evidence
        obs.flags.update(f for f in static.flags if f != "custom_kernel_source")
        if same_source(candidate.source, task.source):
            obs.flags.add("same_as_reference")
            obs.evidence["same_as_reference"] = ["source: the task's reference (normalised: names, docstrings, "
                                                 "imports and formatting aside)"]
        if static.rejecting:
            first = static.rejecting[0]
            obs.candidate_failure = Failure("rejected", f"{first}: {static.evidence[first][0]} (static check; see "
                                            "the harness README)", first)
            return done()
        ext = None
        if key is not None:
            ext = buildcache.extensions_dir(self.cache_root, key)
            ext.mkdir(parents=True, exist_ok=True)
            buildcache.clear_stale_locks(ext)
        lane.settle_previous()  # the last candidate's process (and GPU context) is gone before this one runs
        if ext is None:
            worker = lane.take_candidate_worker()
        else:  # its build folder is bound into its sandbox: a worker of its own
            worker = lane.new_candidate_worker(ext)
        lane.running(worker)
        kcache = self.kernel_cache(candidate)
        buildcache.seed_cache(kcache, worker.cache_dir, trusted=self.trusted_cache)
        # the next pairs' processes start while this one runs (for the next call too when keeping warm)
        lane.prestart(lane.spares if self.keep_warm else remaining)
        try:
            run_pair(side, worker, task, candidate, self.config, obs, static=static,
                     extensions_dir=str(ext) if ext is not None else None, timed=lane.timed,
                     twin_worker=lane.take_twin_worker)
        finally:
            obs.log_tail = worker.log_tail()
            worker.kill(wait=False)
            buildcache.keep_cache(worker.cache_dir, kcache, trusted=self.trusted_cache)
            lane.retire(worker)
        if obs.reference_failure is not None:  # the reference cannot be trusted any more: set it up again
            lane.drop_reference()
        return done()

    def _device_siblings(self, lane: Lane) -> list[Lane]:
        """The pool's other lanes on ``lane``'s device (they hold memory on it beside its pairs)."""
        return [other for other in self.lanes if other is not lane and other.gate is lane.gate]

    def _run_alone(self, lane: Lane, task: Task, candidate: Candidate, first: EvalResult, remaining: int,
                   next_task: bool) -> EvalResult:
        """Run again, with the device to itself, a pair that ran out of GPU memory beside other lanes' pairs
        (:class:`~cudal1.harness.gate.PairTurns`): once the other lanes of the device are between pairs, each lets go
        of what it holds there (its reference, spare workers and last candidate's process; started again for its
        next pair), and the pair runs on ``lane`` as if it were the only one. Its verdict is that run's, whatever it
        is (an out-of-memory error alone is the candidate's, or the task's); ``environment["retried_alone"]`` keeps
        the first run's reason."""
        with lane.turns.alone():
            for other in self._device_siblings(lane):
                other.close()
            with lane.work():
                if lane.ref_failure is not None and lane.ref_failure[0] == task.hash:
                    lane.ref_failure = None  # a reference that ran out of memory beside others gets its own try
                lane.settle_previous()
                res = self._run_on_lane(lane, task, candidate, remaining=remaining, next_task=next_task)
        return replace(res, environment={**res.environment, "retried_alone": first.reason[:300]})

    def record_reference(self, side: ReferenceSide) -> None:
        """Keep the reference's set-up figures in the store of the running :meth:`map` (if any)."""
        store = self._store
        if store is None:
            return
        rec = side.record()
        with self._store_lock:
            store.add_reference(side.task, self.config, rec, run=self._run)

    def check_tasks(self, tasks: Sequence[Task], on_result: Callable[[int, dict[str, Any]], None] | None = None
                    ) -> list[dict[str, Any]]:
        """Task-level checks (constant output, ignored input; notes on parameters without effect; a stateful
        reference), one clean reference worker per task.

        Returns one dict per task: ``{"task", "status": "ok"|"degenerate"|"task_error", "findings": [...],
        "notes": [...], "stateful": bool}``."""
        out: list[dict[str, Any]] = []
        lane = self.lanes[0]
        for i, task in enumerate(tasks):
            with lane.work():
                rec = self._check_task(lane, task)
            rec = {"task": task.name, **rec}
            out.append(rec)
            if on_result:
                on_result(i, rec)
        return out

    def _check_task(self, lane: Lane, task: Task) -> dict[str, Any]:
        """One task's checks in a clean reference worker of ``lane`` (:meth:`check_tasks`)."""
        w = lane.new_reference_worker()
        try:
            rep = w.request("setup", {"task_source": task.source, "device": lane.device, "seed": self.config.seed,
                                      "cpu_threads": self.config.cpu_threads},
                            self.config.compile_timeout_s + self.config.run_timeout_s)
            if rep.is_error:
                return {"status": "task_error", "findings": [rep.reason], "notes": [], "stateful": False}
            tc = rep.task_check
            return {"status": "degenerate" if tc.get("degenerate") else "ok",
                    "findings": list(tc.get("findings", [])), "notes": list(tc.get("notes", [])),
                    "stateful": rep.stateful}
        except WorkerGone as e:
            return {"status": "task_error", "findings": [f"check {e.ended}: {e.detail}"], "notes": [],
                    "stateful": False}
        finally:
            w.close()

    def close(self) -> None:
        """Stop the spare and reference workers of every lane (those kept warm included); the pool can still
        be used."""
        for lane in self.lanes:
            with lane.work():
                lane.close()

    def stop(self) -> None:
        """Stop now (a signal arrived): no further pair starts or is stored, every worker of this process is
        killed and its folder removed. Results already stored stay."""
        self._stopping = True
        kill_all()

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
        of re-run, unless the kernel-library code the candidate imports changed since (the result's
        ``build["library_digest"]``, :func:`~cudal1.harness.techniques.library_digest`), and each new result is
        stored the moment it exists, under ``run``. Pairs of one task run
        on one lane, one after another, beside one reference worker.
        """
        if store is not None and getattr(store, "path", ":memory:") != ":memory:":
            sp = Path(store.path).resolve()
            if sp not in self.hidden:
                self.hidden.append(sp)
        self._store, self._run = store, run
        results: list[EvalResult | None] = [None] * len(pairs)
        groups: dict[str, list[int]] = {}
        digests: dict[str, str] = {}  # candidate source -> digest of the kernel-library code it imports
        for i, (task, cand) in enumerate(pairs):
            if store is not None and cand.source not in digests:  # only a store needs it (reads entry points)
                digests[cand.source] = library_digest(cand.source)
            prev = store.lookup(task, cand, self.config) if store is not None else None
            if prev is not None and prev.build.get("library_digest", "") != digests[cand.source]:
                prev = None  # measured with other library code than the candidate imports now: evaluate again
            if prev is not None and (self.sandboxed or not self.config.require_sandbox):
                results[i] = prev
                if on_result:
                    on_result(i, prev)
            else:
                groups.setdefault(task.hash, []).append(i)
        self.build_all(pairs[i][1] for g in groups.values() for i in g)
        q: queue.Queue[list[int]] = queue.Queue()
        for g in groups.values():
            q.put(g)
        left = [sum(len(g) for g in groups.values())]
        lock = self._store_lock
        errors: list[BaseException] = []

        def lane_loop(lane: Lane) -> None:
            try:
                while True:
                    try:
                        group = q.get_nowait()
                    except queue.Empty:
                        return
                    for i in group:
                        task, cand = pairs[i]
                        with lock:
                            left[0] -= 1
                            remaining = left[0]
                        if self._stopping:
                            return
                        next_task = i == group[-1] and not q.empty()
                        # the pair: beside other lanes' pairs and work, never their timing
                        with lane.turns.shared(), lane.work():
                            res = self._run_on_lane(lane, task, cand, remaining=remaining, next_task=next_task)
                        if out_of_device_memory(res) and self._device_siblings(lane) and not self._stopping:
                            res = self._run_alone(lane, task, cand, res, remaining, next_task)
                        with lane.work():  # its result
                            if digests.get(cand.source):
                                res = replace(res, build={**res.build, "library_digest": digests[cand.source]})
                            with lock:
                                if self._stopping:  # its workers were killed under it: not a result
                                    return
                                if store is not None:
                                    store.add(res, task, cand, self.config, run=run)
                                results[i] = res
                                if on_result:
                                    on_result(i, res)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
                with lane.turns.shared(), lane.work():
                    lane.close()
            finally:
                with lane.turns.shared(), lane.work():  # never while another lane's pair runs alone
                    if not self.keep_warm:
                        lane.close()
                    else:
                        lane.settle_previous()

        if groups:
            threads = [threading.Thread(target=lane_loop, args=(ln,), daemon=True) for ln in self.lanes[: len(groups)]]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self._store = None
        if errors:
            raise errors[0]
        return [r for r in results if r is not None]


#: what torch's ``OutOfMemoryError`` says, as the workers' reasons quote it (:mod:`cudal1.harness.session`)
OUT_OF_MEMORY_MARKS = ("CUDA out of memory", "OutOfMemoryError")


def out_of_device_memory(res: EvalResult) -> bool:
    """Whether pair ``res`` failed because the GPU's memory ran out, in either process (a candidate that says
    so falsely only buys itself one more run, alone, under the same rules)."""
    return res.status != "ok" and any(m in res.reason for m in OUT_OF_MEMORY_MARKS)


_WARNED: set[str] = set()


def _warn_unsandboxed(reason: str) -> None:
    if reason in _WARNED:
        return
    _WARNED.add(reason)
    msg = (f"cudal1: candidate code will run WITHOUT an OS sandbox ({reason}). It can read and write your files "
           "and reach the network; every result is flagged 'unsandboxed'. Use require_sandbox / --require-sandbox "
           "to refuse instead.")
    print("*" * 100 + "\n" + msg + "\n" + "*" * 100, file=sys.stderr, flush=True)
    warnings.warn(msg, RuntimeWarning, stacklevel=3)


def evaluate(task: Task, candidate: Candidate, config: EvalConfig | None = None) -> EvalResult:
    """Evaluate one candidate against its task (a clean reference process and a sandboxed candidate process)."""
    return EvalPool(config).evaluate(task, candidate)


__all__ = ["EvalPool", "SandboxUnavailable", "default_device", "evaluate", "probe_cuda_devices", "syntax_problem"]
