"""Worker side, candidate role: runs inside the OS sandbox. Beyond the shared commands
(:class:`cudal1.harness.session.Session`) it answers ``load`` (imports the candidate: the first candidate code that
runs anywhere), ``check`` (the in-process checks after timed batches) and ``observe`` (one call recorded op by op,
one profiled). Everything it reports is a claim: the parent compares outputs itself and bounds times with its own
clock (:mod:`cudal1.harness.pair`); the in-process checks here (patched bindings, backend switches, threads,
training mode, input writes, reduced-precision ops, kernels launched) are hints that can only fail or flag a
candidate, never pass one."""

from __future__ import annotations

import time
from typing import Any

import torch

from . import integrity
from .buildcache import extension_snapshot
from .loading import CandidateLoadError, load_candidate, load_task_copy
from .models import StateSnapshot, clone_args, construct_model, make_inputs
from .params import randomise_, share_parameters
from .session import Failure, Session, exc_line


class CandidateSession(Session):
    """The candidate role's session."""

    role = "candidate"
    ROLE_COMMANDS = frozenset({"load", "check", "observe"})
    forward_name = "ModelNew.forward"
    raised_status = "runtime_error"
    unreadable_status = "incorrect"
    timed_raise_flag = None

    def _undo_patches(self) -> None:
        if hasattr(self, "snapshot"):
            self.snapshot.restore()

    def guard(self, when: str, check_threads: bool = True) -> None:
        """Undo and report patched bindings, flipped backend switches, threads left running and training mode
        (hints; each can only fail or flag the candidate)."""
        if not hasattr(self, "snapshot"):
            return
        changed = self.snapshot.changed()
        if changed:
            self.snapshot.restore()
            raise Failure("rejected", f"the candidate replaced {', '.join(changed[:5])} ({when}); patching torch, "
                          "timers or the harness is not allowed", "monkeypatch")
        now = integrity.backend_flags()
        new_flags, what = integrity.flag_changes(self.backend, now)
        if what:
            self.flags.update(new_flags)
            self.evidence.setdefault("backend_switches", []).extend(f"{w} ({when})" for w in what)
            integrity.restore_backend_flags(self.backend)
        extra = integrity.threads_left(self.threads0) if check_threads else frozenset()
        if extra:
            raise Failure("rejected", f"{len(extra)} thread(s) started by the candidate still run after it returned "
                          f"({when}; counted in /proc/self/task): work outside the timed call", "threads_left_running")
        training = integrity.training_modules(self.module) if self.module is not None else []
        if training:
            raise Failure("rejected", f"the candidate switched {', '.join(training[:3])} to training mode ({when}); "
                          "both models must stay in eval mode", "mode_change")

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: build a copy of the reference (only to hand its parameter values over), import the
        candidate, construct ``ModelNew``, load the parameters. The first candidate code runs here."""
        self._device_setup(cmd)
        seed = int(cmd["seed"])
        try:
            with torch.no_grad():
                ref_mod = load_task_copy(cmd["task_source"], self.workdir, "ref")
                self.inp_mod = load_task_copy(cmd["task_source"], self.workdir, "inputs")
                init_inputs = list(self.inp_mod.get_init_inputs())
                reference = construct_model(ref_mod.Model, init_inputs, seed, self.device)
                randomise_(reference, seed)
        except BaseException as e:  # noqa: BLE001
            raise Failure("task_error", f"the task failed to load in the candidate's process: {exc_line(e)}",
                          "task_error") from e
        self._make_timer()
        self.snapshot = integrity.IdentitySnapshot()
        self.backend = integrity.backend_flags()
        integrity.warm_thread_pools()  # torch's pools exist before the baseline: they are not the candidate's
        self.threads0 = integrity.live_threads()
        ext_dir = cmd.get("extensions_dir")
        before = extension_snapshot(ext_dir) if ext_dir else {}
        t0 = time.perf_counter()
        try:
            cls = load_candidate(cmd["candidate_source"], self.workdir)
        except CandidateLoadError as e:
            self._undo_patches()
            raise Failure("compile_error", str(e)) from e
        import_s = time.perf_counter() - t0
        after = extension_snapshot(ext_dir) if ext_dir else {}
        build = {"import_s": round(import_s, 3), "extensions": sorted(after),
                 "built_now": any(after.get(k) != v for k, v in before.items()) or bool(set(after) - set(before))}
        self.guard("while importing the candidate")
        try:
            with torch.no_grad():
                self.module = construct_model(cls, init_inputs, seed, self.device)
        except BaseException as e:  # noqa: BLE001
            self._undo_patches()
            raise Failure("runtime_error", f"ModelNew(*get_init_inputs()) failed: {exc_line(e)}") from e
        try:
            with torch.no_grad():
                unmapped = share_parameters(reference, self.module)
        except Exception as e:  # noqa: BLE001
            raise Failure("runtime_error", f"loading the reference's parameters into ModelNew failed: {exc_line(e)}") from e
        del reference
        self.module.eval()
        self.guard("while constructing the candidate")
        if cmd.get("stateful"):
            self.state = StateSnapshot(self.module)
        self.model = self.timed_fn = self.module
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        self._settle()
        return {"type": "loaded", "build": build, "unmapped": unmapped, "free_bytes": self._free_bytes(),
                "hints": self.hints()}

    def _after_trial_call(self, pristine: list[Any], used: list[Any], where: str) -> None:
        """A candidate must not write into its inputs."""
        for k, (p, u) in enumerate(zip(pristine, used, strict=True)):
            if isinstance(p, torch.Tensor) and not (isinstance(u, torch.Tensor) and torch.equal(p, u)):
                raise Failure("rejected", f"the candidate wrote into its input {k} ({where}); inputs must not be "
                              "mutated", "input_mutated")

    def check(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: the in-process checks after timed batches (patched bindings, switches, threads,
        training mode)."""
        self.guard("after a timed batch")
        return {"type": "checked", "hints": self.hints()}

    def observe(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Candidate role: one call recorded op by op (dtypes) and one profiled (kernel names)."""
        args = make_inputs(self.inp_mod, int(cmd["seed"]), self.device)
        rec = integrity.OpRecorder()
        low: list[str] | None
        signature: str | None = None
        with torch.no_grad():
            try:
                with rec:
                    self._call(self.model, clone_args(args), "the recorded call")
                low = rec.low_precision_ops()
                signature = rec.signature()
            except Failure:
                raise
            except Exception as e:  # noqa: BLE001 - some candidates cannot run under a dispatch mode
                low = None
                self.evidence.setdefault("op_recording", []).append(f"unavailable: {exc_line(e)}")
            self.guard("during the recorded call")
            before = integrity.live_threads()
            names = integrity.kernel_names(lambda: self._call(self.model, clone_args(args), "the profiled call",
                                                              check_threads=False), self.device)
            self.threads0 = self.threads0 | (integrity.live_threads() - before)  # the profiler's own threads
            self.guard("during the profiled call")
        return {"type": "observe", "low_precision_ops": low, "kernels": names, "op_signature": signature,
                "hints": self.hints()}
