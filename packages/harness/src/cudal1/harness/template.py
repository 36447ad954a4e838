"""Candidate workers forked from a warm template: a fresh process per candidate without a fresh interpreter.

Starting a worker (sandbox, interpreter, ``import torch``, ``torch._dynamo``, ``torch.profiler``) took most of
every pair on the 2-core CPU, far longer than loading a candidate and its correctness trials
(benchmarks/results/2026-11-29-reward-breakdown-cpu.md). A *template* is a candidate-role worker started once per
lane, in its own sandbox, that imports all of that and then never runs candidate code: for each candidate the parent
sends it two fresh pipes and a log file over a Unix socket (``SCM_RIGHTS``), and it forks one child that becomes
the candidate's worker (:func:`cudal1.harness.worker.serve`). This module is the parent's side of it; the template's
own loop is :mod:`cudal1.harness.template_server`. The child shares the template's pages copy-on-write
and is ready almost at once.

What keeps candidates apart when their processes share a template (the template's guarantees; the parent checks
the first two):

1. **One child at a time, never reused.** :meth:`WorkerTemplate.fork` refuses while any process of an earlier child
   is alive (everything in the template's sandbox but the template itself and bubblewrap's two processes belongs to
   the current child: helpers a candidate forks or daemonises are found there, stopped by
   :meth:`ForkedWorker.freeze` and killed with it).
2. **Nothing written survives a child.** The child's folder (under the template's) is removed by the parent when the
   child is gone, and the template empties the sandbox's ``/tmp`` and ``/dev/shm`` before every fork. Every other
   path of the sandbox is read-only, as for any candidate worker.
3. **The template cannot be reached from a child.** It is not dumpable (``PR_SET_DUMPABLE`` 0: no ``ptrace``, no
   ``/proc/<pid>/mem``), its end of the socket and its own pipes are closed in the child before any command is
   read, it has no CUDA context (a child makes its own), and it runs no thread that a fork would copy half-way.
   A child can still send the template a signal (same user): that ends the template, never a measurement, and the
   lane starts a new one.

**The reference is forked too.** A forked process runs the harness's protocol (drawing inputs, writing and
committing outputs) at another speed than a freshly started one (its pages are the template's, shared until
written), and the parent's clock check charges a candidate only the protocol time beyond the reference's: a
forked candidate beside a started reference had that difference to hide work in. So a forking lane keeps a
second template of the ``reference`` role (unsandboxed, given only the task's own code, as a started reference
worker is; nothing of a candidate ever reaches it) and forks each task's reference worker from it: both sides of
a pair are forked alike, and a lane whose reference cannot be forked starts both sides from then on.

Without ``/proc`` (macOS) or ``fork`` (Windows) there is no template; the lane starts workers as before.
When a pool forks by default: see :class:`cudal1.harness.pool.EvalPool`.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from . import resources
from .process import (
    _LIVE_LOCK,
    LIVE,
    STARTUP_TIMEOUT_S,
    WorkerGone,
    WorkerProcess,
    descendants,
    process_state,
)

__all__ = ["ForkedWorker", "WorkerTemplate", "templates_supported"]

FORK_TIMEOUT_S = 30.0  #: for the template's answer to a fork request


def templates_supported() -> bool:
    """Whether this machine can run templates (Linux: ``/proc``, ``fork``, ``SCM_RIGHTS``)."""
    return hasattr(os, "fork") and os.path.isdir("/proc") and hasattr(socket, "send_fds")


def _ns_pid(pid: int) -> int | None:
    """The innermost PID-namespace pid of host process ``pid`` (``NSpid``'s last field), None when gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return pid


class _ChildProc:
    """The part of ``subprocess.Popen`` the harness uses, for a process the template forked (not our child: its
    exit code comes down the status pipe the template writes when it reaps it)."""

    def __init__(self, pid: int, worker: ForkedWorker, status_fd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._worker = worker
        self._status_fd = status_fd

    def poll(self) -> int | None:
        if self.returncode is None and self._status_fd >= 0:
            r, _, _ = select.select([self._status_fd], [], [], 0)
            if r:
                data = os.read(self._status_fd, 64)
                os.close(self._status_fd)
                self._status_fd = -1
                try:
                    self.returncode = int(data.decode().strip())
                except ValueError:  # the template is gone: no code to read
                    self.returncode = -signal.SIGKILL if self._worker.killed else 1
        if self.returncode is None and self._status_fd < 0 and process_state(self.pid) in (None, "Z", "X"):
            self.returncode = -signal.SIGKILL if self._worker.killed else 1
        return self.returncode

    def close(self) -> None:
        if self._status_fd >= 0:
            os.close(self._status_fd)
            self._status_fd = -1

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("forked worker", timeout or 0.0)
            time.sleep(0.005)
        assert self.returncode is not None
        return self.returncode


class WorkerTemplate:
    """A warm worker that forks workers of its role (see the module docstring).

    Args: as :class:`cudal1.harness.process.WorkerProcess`. ``role`` is the role of the workers it forks: a
    ``candidate`` template (sandboxed where the sandbox exists) forks candidate workers, a ``reference`` one (never
    sandboxed, never given candidate code) forks clean reference workers, so that both sides of a pair are forked
    processes alike. ``env`` must not ask for a CUDA context (``CUDAL1_WARM_CUDA`` is dropped: a forked child cannot
    use its parent's).
    """

    def __init__(self, env: dict[str, str] | None = None, *, role: str = "candidate", sandboxed: bool = False,
                 gpu: bool = False, hidden: list[Path] | None = None, limits: Any = None) -> None:
        if role not in ("candidate", "reference"):
            raise ValueError(f"a template's role is 'candidate' or 'reference', not {role!r}")
        if role == "reference" and sandboxed:
            raise ValueError("a reference template is never sandboxed (it runs only the task's own code)")
        self.role = role
        # numpy's OpenBLAS starts its thread pool at import unless told not to; a template must run one thread
        # (children of a template use numpy's BLAS on one thread: candidates compute with torch, whose own thread
        # pool starts in the child, at its first parallel operation)
        env = {**{k: v for k, v in (env or {}).items() if k != "CUDAL1_WARM_CUDA"}, "OPENBLAS_NUM_THREADS": "1"}
        self.env, self.sandboxed, self.gpu = env, sandboxed, gpu
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.worker = WorkerProcess(role, env, sandboxed=sandboxed, gpu=gpu, hidden=hidden, limits=limits,
                                        template_fd=theirs.fileno(), wipe=sandboxed)
        finally:
            theirs.close()
        self.base: set[int] = set()
        self.forks = 0

    @property
    def alive(self) -> bool:
        return self.worker.proc.poll() is None and self.worker._rep_r >= 0

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Wait for the template's imports; notes its own processes (bubblewrap's and its own)."""
        if not self.worker.ready:
            self.worker.wait_ready(timeout)
            self.base = self.worker.processes()

    def children(self) -> set[int]:
        """Every live process in the template's tree that is not the template's own (the current child's)."""
        # from /proc, not the template's cgroup: a child moves to a cgroup of its own (ForkedWorker), and every
        # process of the sandbox descends from its bwrap (orphans go to the namespace's init)
        pids = set(descendants(self.worker.proc.pid)) - self.base
        return {p for p in pids if process_state(p) not in (None, "Z", "X")}

    def wait_children_gone(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) until no process of an earlier child is alive."""
        deadline = time.monotonic() + timeout
        while self.children() and time.monotonic() < deadline:
            time.sleep(0.005)

    def fork(self, env: dict[str, str] | None = None) -> ForkedWorker:
        """A fresh worker of the template's role, forked from it (ready at once: its ``ready`` is its first message).

        Raises:
            WorkerGone: the template is gone or did not answer (the caller starts a worker the usual way), or a
                process of an earlier child is still alive.
        """
        self.wait_ready()
        if not self.alive:
            raise WorkerGone("died", "the worker template is gone")
        left = self.children()
        if left:
            raise WorkerGone("protocol", f"a forked worker's processes are still alive: {sorted(left)}")
        w = ForkedWorker(self, env or {})
        self.forks += 1
        return w

    def request_fork(self, workdir: Path, env: dict[str, str], fds: list[int]) -> int:
        """Send one fork request; the host pid of the new child."""
        msg = json.dumps({"workdir": str(workdir), "env": env}).encode()
        try:
            socket.send_fds(self._sock, [msg], fds)
            self._sock.settimeout(FORK_TIMEOUT_S)
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = self._sock.recv(4096)
                if not chunk:
                    raise WorkerGone("died", "the worker template closed its socket")
                buf += chunk
        except OSError as e:
            self.close()
            raise WorkerGone("died", f"the worker template did not answer a fork request: {e}") from None
        ans = json.loads(buf.decode())
        if "pid" not in ans:
            raise WorkerGone("startup_failed", f"the worker template refused to fork: {ans.get('error', ans)}")
        ns_pid = int(ans["pid"])
        for p in descendants(self.worker.proc.pid):
            if p not in self.base and _ns_pid(p) == ns_pid:
                return p
        raise WorkerGone("startup_failed", "the forked worker was not found among the template's processes")

    def close(self) -> None:
        """Stop the template (and any child of it)."""
        try:
            self._sock.close()
        except OSError:
            pass
        self.worker.close()


class ForkedWorker(WorkerProcess):
    """A worker forked from a :class:`WorkerTemplate`, of the template's role: the same interface as a started one.
    Its folder is inside the template's (bound writable in a candidate template's sandbox); its processes are every
    process of the template's tree but the template's own; killing it never touches the template."""

    def __init__(self, template: WorkerTemplate, env: dict[str, str]) -> None:  # noqa: D107 - see the class
        self.role = template.role
        self.template = template
        self.dir = template.worker.dir / f"c{template.forks}-{secrets.token_hex(4)}"
        self.dir.mkdir(parents=True)
        self.log = template.worker.dir.parent / (template.worker.dir.name + f"-{self.dir.name}.log")
        self.sandboxed = template.sandboxed
        self.limits = template.worker.limits
        self.cgroup = None
        self.killed = False
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        st_r, st_w = os.pipe()
        log_fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.started = time.monotonic()
        try:
            own = self.cache_env() if self.role == "candidate" else {}  # a reference's caches are the template's env
            pid = template.request_fork(self.dir, {**own, **env}, [cmd_r, rep_w, log_fd, st_w])
        except BaseException:
            for fd in (cmd_w, rep_r, st_r):
                os.close(fd)
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        finally:
            for fd in (cmd_r, rep_w, log_fd, st_w):
                os.close(fd)
        self.proc = _ChildProc(pid, self, st_r)  # type: ignore[assignment]
        try:  # a memory cgroup of its own: its limit counts what it allocates, and an OOM kill is told as such
            self.cgroup = resources.Cgroup.create(self.limits) if resources.cgroup_support() else None
            if self.cgroup is not None:
                for f in self.cgroup.procs_files:
                    Path(f).write_text(str(pid))
        except OSError:
            if self.cgroup is not None:
                self.cgroup.remove()
            self.cgroup = None
        self._cmd_w, self._rep_r = cmd_w, rep_r
        self._buf = b""
        self.ready = False
        self.pending = None
        self._reaper = None
        self._frozen = None
        with _LIVE_LOCK:
            LIVE.add(self)

    def processes(self) -> set[int]:
        """Every live process of the child: those of its cgroup where it has one (it was moved there before it was sent
        anything, so every process candidate code starts is in it, ``setsid`` daemons too), else every process of the
        template's sandbox but the template's own. One cgroup file, as for a started worker: :meth:`freeze` runs inside
        a committed batch's clocked window, and a scan of ``/proc`` there cost a forked worker more time a batch than
        a started reference, charged to honest candidates (benchmarks/results/2026-12-04-committed-batches-cpu.md)."""
        if self.cgroup is not None:
            return {p for p in self.cgroup.pids() | {self.proc.pid} if process_state(p) not in (None, "Z", "X")}
        return self.template.children()

    through_bwrap = False

    def kill(self, wait: bool = True) -> None:
        """SIGKILL every process of the child (its helpers included), close the pipes. The template stays."""
        self.killed = True
        if self.cgroup is not None:
            self.cgroup.kill()
        for _ in range(50):
            left = self.processes()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if not wait:
                break
            time.sleep(0.002)
        self._close_pipes()

    def join(self, timeout: float = 60.0) -> None:
        """Wait until every process of the child is gone."""
        deadline = time.monotonic() + timeout
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.002)
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def cleanup(self) -> None:
        self.proc.close()  # type: ignore[attr-defined]
        super().cleanup()  # its cgroup, folder and log
