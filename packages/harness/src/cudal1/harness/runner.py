"""One evaluation, as it runs inside a worker process: load, check integrity and correctness, time.

The parent process never runs candidate code; it gets the dict this module returns through the worker
protocol (:mod:`cudal1.harness.worker`) and turns it into an :class:`~cudal1.harness.types.EvalResult`.

Order (each step is a rule of the integrity contract, see the harness README):
  1. the task: two pristine copies (reference, inputs); reference built, parameters randomised, the
     task-level degeneracy check run, the timer and the identity snapshot taken: all before any
     candidate code exists in the process;
  2. static checks of the candidate source (rejecting flags end it here);
  3. the candidate loaded in its own namespace; patched bindings and flipped backend switches are
     detected (and undone) after import, construction and every call;
  4. correctness trials (candidate, reference, candidate again, each on its own clone of fresh inputs;
     inputs compared after; threads and training mode checked);
  5. one extra call recorded op by op (reduced precision) and profiled (custom kernels);
  6. timing (:mod:`cudal1.harness.timed_run`), with outputs of timed calls checked.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from . import integrity
from .buildcache import extension_snapshot
from .compare import compare_outputs
from .config import EvalConfig
from .environment import device_info
from .loading import CandidateLoadError, load_candidate, load_task_copy
from .params import randomise_, share_parameters
from .static_checks import analyse, defined_kernels, library_kernels
from .task_checks import check_task
from .timing import Timer

Send = Callable[[dict[str, Any]], None]


class Verdict(Exception):
    """Ends an evaluation early with a status and reason."""

    def __init__(self, status: str, reason: str, flags: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.flags = flags


def exc_line(e: BaseException) -> str:
    """``Type: first line of message (candidate line N)`` for a person."""
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


def clone_args(args: list[Any]) -> list[Any]:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def make_inputs(inputs_module: Any, seed: int, device: torch.device) -> list[Any]:
    """Inputs from the pristine task copy, drawn under ``seed`` directly on ``device``."""
    torch.manual_seed(seed)
    with torch.device(device):
        args = inputs_module.get_inputs()
    return [_to_device(a, device) for a in args]


def _construct(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> nn.Module:
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init_inputs)
    if not isinstance(model, nn.Module):
        raise TypeError(f"{cls.__name__}(...) returned {type(model).__name__}, not an nn.Module")
    return model.to(device)


def exact_fp32() -> None:
    """The numerics every reference runs with: no TF32, no cuDNN autotuning."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False


def load_reference(task_source: str, workdir: Path, seed: int, device: torch.device) -> tuple[nn.Module, Any, list]:
    """(reference model in eval mode with randomised parameters, pristine inputs module, init inputs):
    the task as both an evaluation and ``--check-suite`` see it."""
    ref_mod = load_task_copy(task_source, workdir, "ref")
    inp_mod = load_task_copy(task_source, workdir, "inputs")
    init_inputs = list(inp_mod.get_init_inputs())
    reference = _construct(ref_mod.Model, init_inputs, seed, device)
    randomise_(reference, seed)
    reference.eval()
    return reference, inp_mod, init_inputs


def evaluate_in_worker(job: dict[str, Any], send: Send) -> dict[str, Any]:
    """Run one evaluation job. Returns the fields of an EvalResult (the parent adds its own)."""
    cfg = EvalConfig.from_dict(job["config"])
    device = torch.device(job["device"])
    out: dict[str, Any] = {"status": "ok", "reason": "", "flags": [], "integrity": {}}
    exact_fp32()
    if device.type == "cuda":
        torch.cuda.set_device(device)
    elif cfg.cpu_threads:
        torch.set_num_threads(cfg.cpu_threads)
    out["environment"] = device_info(device)
    try:
        with torch.no_grad():
            Evaluation(job, cfg, device, out, send).run()
    except Verdict as v:
        out["status"], out["reason"] = v.status, v.reason
        out["flags"].extend(v.flags)
    out["flags"] = sorted(set(out["flags"]))
    if out["status"] != "ok":
        out.pop("speedup", None)
    return out


class Evaluation:
    """State of one evaluation inside the worker (see the module docstring for the order)."""

    def __init__(self, job: dict[str, Any], cfg: EvalConfig, device: torch.device, out: dict[str, Any],
                 send: Send) -> None:
        self.job, self.cfg, self.device, self.out, self.send = job, cfg, device, out, send
        self.flags: list[str] = out["flags"]
        self.info: dict[str, Any] = out["integrity"]
        self.workdir = Path(job["workdir"])
        self.seed = cfg.seed
        self.candidate: nn.Module | None = None

    # -- guards -----------------------------------------------------------------------------------
    def guard(self, when: str, check_threads: bool = True) -> None:
        """Undo and report patched bindings and flipped backend switches (called after candidate code)."""
        changed = self.snapshot.changed()
        if changed:
            self.snapshot.restore()
            raise Verdict("rejected", f"the candidate replaced {', '.join(changed[:5])} ({when}); "
                          "patching torch, timers or the harness is not allowed", ("monkeypatch",))
        now = integrity.backend_flags()
        new_flags, what = integrity.flag_changes(self.backend, now)
        if what:
            self.flags.extend(new_flags)
            self.info.setdefault("backend_switches", []).extend(f"{w} ({when})" for w in what)
            integrity.restore_backend_flags(self.backend)
        extra = integrity.live_threads() - self.threads0
        if check_threads and extra > 0:
            raise Verdict("rejected", f"{extra} thread(s) started by the candidate still run after it returned "
                          f"({when}): work outside the timed call", ("threads",))
        training = integrity.training_modules(self.candidate) if self.candidate is not None else []
        if training:
            raise Verdict("rejected", f"the candidate switched {', '.join(training[:3])} to training mode ({when}); "
                          "both models must stay in eval mode", ("mode_change",))

    def call_candidate(self, args: list[Any], where: str) -> Any:
        """One candidate call, then a whole-device synchronisation (its output is judged as it is once
        all work, on any stream, has finished), then the guards."""
        try:
            out = self.candidate(*args)
            self.sync()
        except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt from candidate code too
            self.snapshot.restore()
            raise Verdict("runtime_error", f"ModelNew.forward raised in {where}: {exc_line(e)}") from e
        self.guard(where)
        return out

    # -- steps ------------------------------------------------------------------------------------
    def run(self) -> None:
        from .timed_run import time_pair

        phases: dict[str, float] = {}
        steps = (("task", self.load_task), ("static", self.check_static), ("load", self.load_candidate),
                 ("correctness", self.correctness), ("observe", self.observe_one_call),
                 ("timing", lambda: time_pair(self)))
        for name, step in steps:
            t0 = time.perf_counter()
            step()
            phases[name] = round(time.perf_counter() - t0, 3)
        self.out["timing"]["phases_s"] = phases  # where the worker's time went (s)

    def load_task(self) -> None:
        device, seed = self.device, self.seed
        try:
            self.reference, self.inp_mod, self.init_inputs = load_reference(self.job["task_source"], self.workdir,
                                                                           seed, device)
            task_peak = self._task_peak_memory()
            task_check = check_task(self.reference, lambda s: make_inputs(self.inp_mod, s, device), seed)
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"the task itself failed to load or run its Model: {exc_line(e)}",
                          ("task_error",)) from e
        if task_peak is not None:
            self.out["memory"] = {"task_peak_bytes": task_peak}
        self.info["task_check"] = task_check
        if task_check["degenerate"]:
            self.flags.append("task_degenerate")
        l2 = self.out["environment"].get("l2_bytes") or 0
        self.timer = Timer(device, l2_flush_bytes=2 * int(l2) if device.type == "cuda" else 0)
        self.sync = (lambda s=torch.cuda.synchronize, d=device: s(d)) if device.type == "cuda" else (lambda: None)
        self.snapshot = integrity.IdentitySnapshot()
        self.backend = integrity.backend_flags()
        self.threads0 = integrity.live_threads()

    def _task_peak_memory(self) -> int | None:
        """Peak GPU bytes of the task on its own: the reference model, one input set, one eager forward."""
        if self.device.type != "cuda":
            return None
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        args = make_inputs(self.inp_mod, self.seed, self.device)
        o = self.reference(*args)
        torch.cuda.synchronize(self.device)
        peak = torch.cuda.max_memory_allocated(self.device)
        del o, args
        return int(peak)

    def check_static(self) -> None:
        rep = analyse(self.job["candidate_source"])
        self.info["static"] = rep.evidence
        self.flags.extend(f for f in rep.flags if f != "custom_kernel_source")
        if rep.rejecting:
            first = rep.rejecting[0]
            raise Verdict("rejected", f"{first}: {rep.evidence[first][0]} (static check; see the harness README)")

    def load_candidate(self) -> None:
        self.send({"type": "phase", "phase": "load"})
        ext_dir = self.job.get("extensions_dir")
        before = extension_snapshot(ext_dir) if ext_dir else {}
        t0 = time.perf_counter()
        try:
            cand_cls = load_candidate(self.job["candidate_source"], self.workdir)
        except CandidateLoadError as e:
            self.snapshot.restore()
            raise Verdict("compile_error", str(e)) from e
        load_s = time.perf_counter() - t0
        after = extension_snapshot(ext_dir) if ext_dir else {}
        self.out["build"] = {
            "import_s": round(load_s, 3),
            "built_now": any(after.get(k) != v for k, v in before.items()) or bool(set(after) - set(before)),
            "extensions": sorted(after),
        }
        self.guard("while importing the candidate")
        try:
            self.candidate = _construct(cand_cls, self.init_inputs, self.seed, self.device)
        except BaseException as e:  # noqa: BLE001
            self.snapshot.restore()
            raise Verdict("runtime_error", f"ModelNew(*get_init_inputs()) failed: {exc_line(e)}") from e
        try:
            unmapped = share_parameters(self.reference, self.candidate)
        except Exception as e:  # noqa: BLE001
            raise Verdict("runtime_error", f"loading the reference's parameters into ModelNew failed: {exc_line(e)}") from e
        if unmapped:
            self.info["unmapped_parameters"] = unmapped
        self.candidate.eval()
        self.guard("while constructing the candidate")
        self.send({"type": "phase", "phase": "run"})

    def correctness(self) -> None:
        cfg = self.cfg
        worst_abs = worst_rel = 0.0
        rtol = atol = None
        for i in range(cfg.trials):
            args = make_inputs(self.inp_mod, self.seed + 1000 * (i + 1), self.device)
            for label in ("", " (second call)"):
                mine = clone_args(args)
                c = self.call_candidate(mine, f"trial {i + 1}{label}")
                self._check_inputs(args, mine, f"trial {i + 1}{label}")
                if label == "":
                    ref_out = self.reference(*clone_args(args))
                cmp = compare_outputs(c, ref_out, rtol=cfg.rtol, atol=cfg.atol)
                if not cmp.ok:
                    raise Verdict("incorrect", f"trial {i + 1}{label}: {cmp.reason}")
                worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
                rtol, atol = cmp.rtol, cmp.atol
                del c, mine
            del ref_out, args
        self.out["correctness"] = {"trials": cfg.trials, "max_abs_err": worst_abs, "max_rel_err": worst_rel,
                                   "rtol": rtol, "atol_last": atol}

    def _check_inputs(self, pristine: list[Any], used: list[Any], where: str) -> None:
        for k, (p, u) in enumerate(zip(pristine, used, strict=True)):
            if isinstance(p, torch.Tensor) and not (isinstance(u, torch.Tensor) and torch.equal(p, u)):
                raise Verdict("rejected", f"the candidate wrote into its input {k} ({where}); inputs must not be "
                              "mutated", ("input_mutated",))

    def observe_one_call(self) -> None:
        """One extra candidate call, recorded op by op and profiled for the kernels it launched."""
        args = make_inputs(self.inp_mod, self.seed + 555, self.device)
        ref_rec, cand_rec = integrity.OpRecorder(), integrity.OpRecorder()
        try:
            with ref_rec:
                self.reference(*clone_args(args))
            with cand_rec:
                self.candidate(*clone_args(args))
            low = [op for op in cand_rec.low_precision_ops() if op not in set(ref_rec.low_precision_ops())]
            if low:
                self.flags.append("reduced_precision")
                self.info["low_precision_ops"] = low[:20]
        except Exception as e:  # noqa: BLE001 - some candidates cannot run under a dispatch mode
            self.info["op_recording"] = f"unavailable: {exc_line(e)}"
        self.guard("during the recorded call")
        names = integrity.kernel_names(lambda: self.candidate(*clone_args(args)), self.device)
        self.guard("during the profiled call")
        if names is None:
            self.out["uses_custom_kernel"] = False if self.device.type == "cpu" else None
            return
        src = self.job["candidate_source"]
        lib, custom = integrity.classify_kernels(names, defined_kernels(src) + library_kernels(src))
        self.info["kernels"] = {"library": lib[:30], "custom": custom[:30]}
        self.out["uses_custom_kernel"] = bool(custom)
        if custom:
            self.flags.append("uses_custom_kernel")
