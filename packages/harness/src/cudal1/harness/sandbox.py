"""Parent side of the worker protocol: start, feed, watch and kill one worker process.

A worker runs one job in its own process group (so a candidate's children die with it). The parent
reads only JSON messages from a dedicated pipe; the worker's stdout and stderr go to a log file whose
tail is kept for humans. Time limits are enforced here, with the parent's clock: ``compile_timeout_s``
until the worker reports that the candidate is loaded, then ``run_timeout_s``.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STARTUP_TIMEOUT_S = 120.0
MAX_MESSAGE_BYTES = 16 << 20


@dataclass
class JobOutcome:
    """What came back from one job: the result dict, or why there is none."""

    result: dict[str, Any] | None
    ended: str  # "result" | "timeout" | "died" | "startup_failed" | "forged"
    detail: str = ""
    phases: list[tuple[str, float]] = field(default_factory=list)
    log_tail: str = ""
    wall_s: float = 0.0
    run_s: float = 0.0  # parent-clock seconds from the 'run' phase message to the result


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class WorkerProcess:
    """One worker subprocess. Start it early (``WorkerProcess(env)``): torch imports while you wait."""

    def __init__(self, env: dict[str, str] | None = None, workdir: Path | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="cudal1-worker-", dir=workdir))
        self.log = self.dir / "worker.log"
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env["PYTHONUNBUFFERED"] = "1"
        full_env["PYTHONPATH"] = os.pathsep.join(p for p in [*sys.path, full_env.get("PYTHONPATH", "")] if p)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cudal1.harness.worker", "--job-fd", str(job_r), "--result-fd", str(res_w),
             "--log", str(self.log)],
            pass_fds=(job_r, res_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=full_env,
            cwd=self.dir,
            start_new_session=True,
        )
        os.close(job_r)
        os.close(res_w)
        self._job_w = job_w
        self._res_r = res_r
        self._buf = b""
        self.ready = False

    # -- messages ---------------------------------------------------------------------------------
    def _read_message(self, timeout: float) -> dict[str, Any] | None | str:
        """Next message; None on timeout; the string 'eof' when the worker closed the pipe."""
        end = time.monotonic() + max(timeout, 0.0)
        while b"\n" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self._res_r], [], [], left)
            if not r:
                return None
            chunk = os.read(self._res_r, 1 << 16)
            if not chunk:
                return "eof"
            self._buf += chunk
            if len(self._buf) > MAX_MESSAGE_BYTES:
                return "eof"
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            msg = json.loads(line.decode())
        except (ValueError, UnicodeDecodeError):
            return {"type": "garbage"}
        return msg if isinstance(msg, dict) else {"type": "garbage"}

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> bool:
        while not self.ready:
            msg = self._read_message(timeout)
            if msg is None or msg == "eof":
                return False
            if isinstance(msg, dict) and msg.get("type") == "ready":
                self.ready = True
        return True

    def log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    # -- one job ----------------------------------------------------------------------------------
    def run_job(self, job: dict[str, Any], compile_timeout_s: float, run_timeout_s: float,
                first_phase: str = "load") -> JobOutcome:
        """Send one job and wait for its result under the two time limits (``compile_timeout_s`` until the
        worker reports its 'run' phase, then ``run_timeout_s``). The worker is finished after."""
        t0 = time.monotonic()
        phases: list[tuple[str, float]] = []
        if not self.wait_ready():
            self.kill()
            return JobOutcome(None, "startup_failed", self._death_detail(), phases, self.log_tail(),
                              time.monotonic() - t0)
        token = secrets.token_hex(16)
        job = dict(job, workdir=str(self.dir), token=token)
        data = (json.dumps(job) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._job_w, view):]
            os.close(self._job_w)
            self._job_w = -1
        except OSError:
            self.kill()
            return JobOutcome(None, "died", self._death_detail(), phases, self.log_tail(), time.monotonic() - t0)
        limit, phase = compile_timeout_s, first_phase
        deadline = time.monotonic() + limit
        run_started: float | None = None
        while True:
            msg = self._read_message(deadline - time.monotonic())
            if msg is None:
                self.kill()
                return JobOutcome(None, "timeout", f"exceeded the {phase} time limit of {limit:g} s", phases,
                                  self.log_tail(), time.monotonic() - t0)
            if msg == "eof":
                detail = self._death_detail()
                return JobOutcome(None, "died", detail, phases, self.log_tail(), time.monotonic() - t0)
            assert isinstance(msg, dict)
            if msg.get("token") != token:
                # not written by the harness's worker code: the candidate wrote into the result pipe
                self.kill()
                return JobOutcome(None, "forged", "a message without the job's token arrived on the result pipe: "
                                  "the candidate wrote into the harness's channel", phases, self.log_tail(),
                                  time.monotonic() - t0)
            kind = msg.get("type")
            if kind == "phase":
                phases.append((str(msg.get("phase")), time.monotonic() - t0))
                if msg.get("phase") == "run" and run_started is None:
                    run_started = time.monotonic()
                    limit, phase = run_timeout_s, "run"
                    deadline = time.monotonic() + limit
            elif kind == "result" and isinstance(msg.get("result"), dict):
                now = time.monotonic()
                self.finish()
                return JobOutcome(msg["result"], "result", "", phases, self.log_tail(), now - t0,
                                  (now - run_started) if run_started else 0.0)

    def _death_detail(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "the worker stopped answering and was killed"
        if code < 0:
            name = _signal_name(code)
            what = {"SIGSEGV": "segmentation fault", "SIGKILL": "killed (out of memory?)", "SIGABRT": "aborted"}
            return f"the worker process died: {name}" + (f" ({what[name]})" if name in what else "")
        return f"the worker process exited with code {code} before reporting a result (os._exit or sys.exit?)"

    def finish(self) -> None:
        """End a worker that has reported: nothing it does after its result can matter, so its process
        group is killed at once and reaped in the background (tearing down a large CUDA context can take
        seconds that the next pair need not wait for)."""
        self.kill(wait=False)

    def kill(self, wait: bool = True) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if wait:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
        else:
            import threading

            threading.Thread(target=self.proc.wait, name="cudal1-reap", daemon=True).start()
        for fd in (self._res_r, self._job_w):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._res_r = self._job_w = -1

    def cleanup(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
