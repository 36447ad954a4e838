"""Worker side, reference role: the clean process of a task. It loads the task and builds the reference model, and
never sees candidate code. Beyond the shared commands (:class:`cudal1.harness.session.Session`) it answers ``setup``
(task checks, stateful detection, output layout, memory figures, its time alone), ``configure`` (the timing
baseline: eager, torch.compile, CUDA graphs, cuDNN benchmark) and ``monitor`` (the GPU's clocks)."""

from __future__ import annotations

from typing import Any

import torch

from . import integrity
from .baselines import BaselineError, reference_runner
from .compare import flatten_outputs
from .digest import digest_tensor
from .environment import ClockMonitor, device_info
from .models import StateSnapshot, clone_args, load_reference, make_inputs, nbytes
from .outputs import describe_output
from .session import Failure, Session, exc_line
from .task_checks import check_task


def _fingerprint(out: Any) -> list[tuple]:
    """Digests (fixed weights) of an output's tensor leaves and its plain values: equal for equal outputs."""
    fp: list[tuple] = []
    for x in flatten_outputs(out):
        if isinstance(x, torch.Tensor):
            d = digest_tensor(x, 12345)
            fp.append((d.d1, d.d2, d.a2, d.nan, d.posinf, d.neginf))
        else:
            fp.append((repr(x),))
    return fp


def _fingerprints_equal(a: list[tuple], b: list[tuple]) -> bool:
    """Equal up to the rounding noise of a non-deterministic kernel (1e-5 of the output's magnitude, as the
    task checks' "unchanged")."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if len(x) != len(y):
            return False
        if len(x) == 1:
            if x != y:
                return False
            continue
        scale = max(abs(x[2]), abs(y[2]), 1e-30) ** 0.5  # sqrt(sum x^2)
        if x[3:] != y[3:] or abs(x[0] - y[0]) > 1e-5 * scale * 10 or abs(x[1] - y[1]) > 1e-5 * max(x[2], y[2], 1e-30):
            return False
    return True


class ReferenceSession(Session):
    """The reference role's session. A failure of the task's own code is a ``task_error``, never a candidate's."""

    role = "reference"
    ROLE_COMMANDS = frozenset({"setup", "configure", "monitor"})
    forward_name = "the reference"
    raised_status = "task_error"
    unreadable_status = "task_error"
    timed_raise_flag = "baseline_failed"

    def setup(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: load the task, build the reference, check the task, describe its output."""
        self._device_setup(cmd)
        seed = int(cmd["seed"])
        env = device_info(self.device)
        try:
            with torch.no_grad():
                model, self.inp_mod, _init = load_reference(cmd["task_source"], self.workdir, seed, self.device)
                self.module = model
                args = make_inputs(self.inp_mod, seed, self.device)
                set_bytes = nbytes(args)
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                    torch.cuda.reset_peak_memory_stats(self.device)
                    base = torch.cuda.memory_allocated(self.device)
                snap = StateSnapshot(model)
                # two calls on the same inputs: a stateful reference answers differently. Each output is reduced
                # to a fingerprint and freed before the next call (a task may need most of the GPU for one call)
                o1 = model(*clone_args(args))
                peak = None
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                    peak = int(torch.cuda.max_memory_allocated(self.device) - base)
                out_bytes = nbytes(o1)
                leaves = describe_output(o1, digest_seed=None, sample_seed=None, outbox=None)
                f1 = _fingerprint(o1)
                del o1
                f2 = _fingerprint(model(*clone_args(args)))
                stateful = not _fingerprints_equal(f1, f2)
                snap.restore()
                if stateful:
                    self.state = snap
                self._make_timer()
                assert self.timer is not None
                times = []
                for _ in range(3):
                    if self.state is not None:
                        self.state.restore()
                    t, _o = self.timer.time_call(model, args)
                    times.append(t)
                    del _o
                call_ms = min(times)
                task_check = (check_task(model, lambda s: make_inputs(self.inp_mod, s, self.device), seed,
                                         before_call=snap.restore if stateful else None)
                              if cmd.get("check_task", True) else {"degenerate": False, "findings": [], "notes": []})
                rec = integrity.OpRecorder()
                signature: str | None = None
                try:
                    with rec:
                        if self.state is not None:
                            self.state.restore()
                        model(*clone_args(args))
                    low = rec.low_precision_ops()
                    signature = rec.signature()
                except Exception:  # noqa: BLE001 - some models cannot run under a dispatch mode
                    low = []
                if self.state is not None:
                    self.state.restore()
        except Failure:
            raise
        except BaseException as e:  # noqa: BLE001 - the task's own code failed: not a candidate's fault
            raise Failure("task_error", f"the task failed to load or run its Model: {exc_line(e)}", "task_error") from e
        self.model = model
        model_bytes = nbytes(list(model.parameters()) + list(model.buffers()))
        return {"type": "setup", "task_check": task_check, "stateful": stateful, "leaves": leaves,
                "set_bytes": set_bytes, "out_bytes": out_bytes, "model_bytes": model_bytes,
                "peak_bytes": peak, "call_ms": call_ms, "free_bytes": self._free_bytes(), "environment": env, "low_precision_ops": low,
                "op_signature": signature}

    def configure(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: the runner timed for the configured baseline, with ``n`` input buffers (CUDA graphs
        capture one graph per buffer set; later batches copy new values into them)."""
        baseline, n = str(cmd["baseline"]), int(cmd["n"])
        seeds = [int(s) for s in cmd["seeds"]][:n]
        with torch.no_grad():
            sets = [make_inputs(self.inp_mod, s, self.device) for s in seeds]
            try:
                self.timed_fn = reference_runner(self.model, baseline, sets, self.device)
                if baseline != "eager":
                    for args in sets[:2]:
                        if self.state is not None:
                            self.state.restore()
                        self.timed_fn(*args)
                    self.sync()
            except (BaselineError, Exception) as e:  # noqa: BLE001
                raise Failure("runtime_error", f"the reference failed in baseline {baseline!r}: {exc_line(e)}",
                              "baseline_failed") from e
        self.graph_sets = sets if baseline == "cudagraph" else None
        # CUDA-graph trees (reduce-overhead) hand out outputs that the next call overwrites: keep a copy, made
        # outside the timed call, so that every output of a batch can still be digested after the batch
        self.copy_outputs = baseline == "compile-reduce-overhead"
        self.sets = sets
        self._settle()
        return {"type": "configured", "free_bytes": self._free_bytes()}

    def monitor(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Reference role: start or stop sampling the GPU's clocks and throttle reasons (NVML)."""
        if cmd["action"] == "start":
            self.clock_monitor = ClockMonitor(self.device)
            self.clock_monitor.__enter__()
            return {"type": "monitor", "clocks": {}}
        clocks: dict[str, Any] = {}
        if self.clock_monitor is not None:
            self.clock_monitor.__exit__(None, None, None)
            clocks = self.clock_monitor.summary()
            self.clock_monitor = None
        return {"type": "monitor", "clocks": clocks}
