"""Parent side of one worker process: start it (sandboxed when it runs candidate code), send commands, read
replies under the parent's own deadlines, kill it and everything it started.

:meth:`WorkerProcess.request` sends one command and returns the parsed :class:`~protocol.WorkerReport`, or
raises :class:`WorkerGone` (died, timed out, protocol broken) with what the parent saw. Every live worker is
in :data:`LIVE`, so that a signal handler (:func:`kill_all`) can end them all and remove their folders.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import resources, sandbox
from .protocol import ProtocolError, WorkerReport, parse_reply
from .wire import ADDRESS_SPACE_ENV

STARTUP_TIMEOUT_S = 180.0
MAX_MESSAGE_BYTES = 64 << 20
#: glibc's allocator fixed to the same settings in every worker. By default glibc moves its mmap threshold
#: with each process's history of frees, so the same allocation is served from the heap in one process and by
#: a fresh mmap (page faults on every call) in another: an identical model measured 1.3x faster in one
#: process than in the other on CPU (a 147 KB output, just above the default 128 KB threshold). Fixed values
#: stop the adjustment: blocks under 32 MiB (glibc's largest threshold) come from the heap. The heap is never
#: trimmed (1 TiB): with a trim threshold of 128 MiB, which a batch's inputs and outputs can reach, the heap went
#: back to the kernel after some batches and not others, and in 5 of 22 pools timing a 4 MiB relu in batches of 16
#: the candidate's process paid page faults on every call (2.1-2.3 ms a call against 0.3-0.4 ms: rejected
#: ``timing_disagrees``); 0 of 12 with the heap kept, and 0 of 20 with two near variants
#: (benchmarks/results/2026-12-05-allocator-faults-cpu.md).
#: A worker lives for one candidate, or one task's reference: what its heap keeps is its own peak.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1099511627776"

FREEZE_TIMEOUT_S = 2.0
#: states of /proc/<pid>/stat in which a process can still run: running, sleeping, disk sleep, waking, parked, idle
RUNNING_STATES = frozenset("RSDWPI")


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` in ``/proc/<pid>/stat`` (``R``, ``S``, ``T`` stopped, ``t`` stopped by a tracer,
    ``Z`` ...), or None when it is gone (or there is no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            line = f.read()
    except OSError:
        return None
    rest = line[line.rfind(b")") + 2 :]
    return rest[:1].decode() if rest else None


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


LIVE: set[WorkerProcess] = set()
_LIVE_LOCK = threading.Lock()


class WorkerGone(Exception):
    """The worker cannot answer: ``ended`` is ``timeout``, ``died``, ``startup_failed`` or ``protocol``."""

    def __init__(self, ended: str, detail: str) -> None:
        super().__init__(detail)
        self.ended, self.detail = ended, detail


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def worker_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker of either role: the allow-listed variables of this process, ``extra``, and
    what the harness fixes for both alike (unbuffered output, no user site, the allocator's settings
    :data:`MALLOC_TUNABLES`, the import paths of this process that belong to installed packages as absolute
    ``PYTHONPATH``: :func:`cudal1.harness.sandbox.installed_paths`, never the launching folder)."""
    return sandbox.sanitized_env({**(extra or {}), "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1",
                                  "GLIBC_TUNABLES": MALLOC_TUNABLES,
                                  "PYTHONPATH": os.pathsep.join(sandbox.installed_paths())})


def scratch_root() -> str | None:
    """Where worker folders go: ``$CUDAL1_SCRATCH`` if set, else ``/dev/shm`` when it has room (RAM-backed,
    charged to the writer's memory cgroup, so a candidate filling its scratch hits its memory limit), else the
    temp folder."""
    env = os.environ.get("CUDAL1_SCRATCH")
    if env:
        Path(env).mkdir(parents=True, exist_ok=True)
        return env
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= (2 << 30) and os.access("/dev/shm", os.W_OK):
            return "/dev/shm"
    except OSError:
        pass
    return None


class WorkerProcess:
    """One worker subprocess. Start it early: torch imports while you wait.

    Args:
        role: ``reference`` (clean process, never given candidate code) or ``candidate`` (sandboxed).
        env: extra environment (on top of the allow-listed variables of this process).
        sandboxed: run inside bubblewrap (candidate workers when the sandbox is available).
        gpu: bind the GPU device nodes into the sandbox.
        writable: folders the sandbox may write besides its own workdir (build and kernel caches).
        hidden: paths to hide even if they lie inside a folder the sandbox can read (store, JSON).
        limits: resource limits (cgroup where possible, rlimits otherwise).
        template_fd: a socket: the worker becomes a template that forks candidate workers on requests arriving
            there (:mod:`cudal1.harness.template`); ``wipe``: it empties ``/tmp`` and ``/dev/shm`` before each.
    """

    through_bwrap = True  #: the exit code is bwrap's (a forked worker's is its own: cudal1.harness.template)

    def __init__(self, role: str, env: dict[str, str] | None = None, *, sandboxed: bool = False, gpu: bool = False,
                 writable: list[Path] | None = None, hidden: list[Path] | None = None,
                 limits: sandbox.Limits | None = None, template_fd: int | None = None, wipe: bool = False) -> None:
        self.role = role
        self.dir = Path(tempfile.mkdtemp(prefix=f"cudal1-{role[:3]}-", dir=scratch_root()))
        self.log = self.dir.parent / (self.dir.name + ".log")
        self.sandboxed = sandboxed
        self.limits = limits or sandbox.Limits()
        self.cgroup: resources.Cgroup | None = None
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        own = self.cache_env() if role == "candidate" else {}
        try:
            self.cgroup = resources.Cgroup.create(self.limits) if resources.cgroup_support() else None
        except OSError:
            self.cgroup = None
        worker_env = worker_environment({**own, **(env or {})})
        worker_env.pop(ADDRESS_SPACE_ENV, None)  # the parent's to set, never inherited
        if self.cgroup is None and self.limits.memory_bytes and not gpu:
            # no memory cgroup: the worker caps its address space itself once its imports are done (see
            # address_space.limit_address_space); a cap set at exec would count the shared libraries a CUDA build of
            # torch maps, and such a worker could not start under 1.5 GB (an H100 host, 2026-11-27)
            worker_env[ADDRESS_SPACE_ENV] = str(self.limits.memory_bytes)
        command = [sys.executable, "-m", "cudal1.harness.worker", "--role", role, "--cmd-fd", str(cmd_r),
                   "--reply-fd", str(rep_w), "--workdir", str(self.dir)]
        passed = [cmd_r, rep_w]
        if template_fd is not None:  # a template (cudal1.harness.template): forks candidate workers on request
            command += ["--template-fd", str(template_fd), *(["--wipe"] if wipe else [])]
            passed.append(os.dup(template_fd))
            command[command.index("--template-fd") + 1] = str(passed[-1])
        if sandboxed:
            info = sandbox.detect()
            spec = sandbox.SandboxSpec(self.dir, list(writable or []), gpu, list(hidden or []))
            bwrap, args_fd = sandbox.args_through_fd(sandbox.bwrap_argv(info, spec, worker_env))
            passed.append(args_fd)
            command = [*bwrap, "--", *command]
            popen_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            popen_env = worker_env
        argv = sandbox.launch_argv(self.cgroup, self.limits, gpu, command)
        self.started = time.monotonic()
        log_fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self.proc = subprocess.Popen(argv, pass_fds=tuple(passed), stdin=subprocess.DEVNULL, stdout=log_fd,
                                         stderr=log_fd, env=popen_env, cwd=self.dir, start_new_session=True)
        finally:
            os.close(log_fd)
            for fd in passed:
                os.close(fd)
        self._cmd_w, self._rep_r = cmd_w, rep_r
        self._buf = b""
        self.ready = False
        self.pending: str | None = None
        self._reaper: threading.Thread | None = None
        self._frozen: set[int] | None = None
        with _LIVE_LOCK:
            LIVE.add(self)

    @property
    def outbox(self) -> Path:
        return self.dir / "outbox"

    @property
    def cache_dir(self) -> Path:
        """The candidate worker's own kernel caches (inside its writable folder)."""
        return self.dir / "cache"

    def cache_env(self) -> dict[str, str]:
        """A candidate worker's kernel caches, private to it (seeded by the parent: :func:`seed_cache`)."""
        return {"TRITON_CACHE_DIR": str(self.cache_dir / "triton"), "CUPY_CACHE_DIR": str(self.cache_dir / "cupy"),
                "TORCHINDUCTOR_CACHE_DIR": str(self.cache_dir / "inductor")}

    # -- messages ---------------------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> Any:
        """The next JSON line; raises WorkerGone on timeout, EOF or an oversized/undecodable message."""
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerGone("timeout", "")
            r, _, _ = select.select([self._rep_r], [], [], left)
            if not r:
                raise WorkerGone("timeout", "")
            chunk = os.read(self._rep_r, 1 << 20)
            if not chunk:
                raise WorkerGone("died", self._death_detail())
            self._buf += chunk
            if len(self._buf) > MAX_MESSAGE_BYTES:
                raise WorkerGone("protocol", f"a message of more than {MAX_MESSAGE_BYTES} bytes")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line.decode())
        except (ValueError, UnicodeDecodeError):
            raise WorkerGone("protocol", "a message that is not JSON arrived on the reply channel") from None

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Wait for the worker's ``ready`` (sent before any command, so before any candidate code runs)."""
        if self.ready:
            return
        try:
            msg = self._read_message(time.monotonic() + timeout)
        except WorkerGone as e:
            self.kill()
            if e.ended == "timeout":
                raise WorkerGone("startup_failed", f"the worker did not start within {timeout:g} s") from None
            raise WorkerGone("startup_failed", e.detail or "the worker could not start") from None
        if not (isinstance(msg, dict) and msg.get("type") == "ready"):
            self.kill()
            raise WorkerGone("protocol", "the worker's first message was not 'ready'")
        self.ready = True

    def request(self, op: str, payload: dict[str, Any], timeout: float, *, calls: int | None = None) -> WorkerReport:
        """Send command ``op`` and return its reply, parsed and validated.

        Raises:
            WorkerGone: the worker died, did not answer within ``timeout`` seconds (parent clock), or broke the
                protocol (anything but one well-formed reply with this command's id); the worker is killed.
        """
        self.wait_ready()
        cmd_id = secrets.token_hex(8)
        data = (json.dumps({**payload, "op": op, "id": cmd_id}) + "\n").encode()
        deadline = time.monotonic() + max(timeout, 0.001)
        try:
            if self._buf:  # something arrived while no command was pending: out of turn
                raise ProtocolError("a message arrived while no command was pending")
            r, _, _ = select.select([self._rep_r], [], [], 0)
            if r:
                chunk = os.read(self._rep_r, 1 << 20)
                if chunk:
                    raise ProtocolError("a message arrived while no command was pending")
            view = memoryview(data)
            while view:
                view = view[os.write(self._cmd_w, view):]
            self.pending = op
            msg = self._read_message(deadline)
            report = parse_reply(msg, op, cmd_id, calls=calls)
        except ProtocolError as e:
            self.kill()
            raise WorkerGone("protocol", str(e)) from None
        except WorkerGone as e:
            if e.ended == "timeout":
                self.kill()
                raise WorkerGone("timeout", f"no answer to {op!r} within {timeout:.3g} s") from None
            self.kill()
            raise
        except OSError:
            self.kill()
            raise WorkerGone("died", self._death_detail()) from None
        self.pending = None
        return report

    def log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _death_detail(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "the worker stopped answering and was killed"
        oom = self.cgroup is not None and self.cgroup.kind and _oom_killed(self.cgroup)
        if self.sandboxed and self.through_bwrap and code > 128 and code - 128 < 65:  # bwrap's init: 128 + signal
            code = -(code - 128)
        if code < 0:
            name = _signal_name(code)
            what = {"SIGSEGV": "segmentation fault", "SIGKILL": "killed", "SIGABRT": "aborted"}
            extra = " (out of memory: over its memory limit)" if oom else (f" ({what[name]})" if name in what else "")
            return f"the worker process died: {name}{extra}"
        if oom:
            return f"the worker process exited with code {code} after going over its memory limit"
        return f"the worker process exited with code {code} before replying (os._exit or sys.exit?)"

    # -- stopping while the other worker is timed ---------------------------------------------------------
    def processes(self) -> set[int]:
        """Every live process of this worker: the one started, its descendants (with a sandbox, every process of its
        PID namespace: orphans are reparented to the namespace's init) and those of its cgroup."""
        if not os.path.isdir("/proc"):  # no /proc (macOS): the process started, whose descendants cannot be listed
            return {self.proc.pid} if self.proc.poll() is None else set()
        if self.cgroup is not None:  # every process it started is in it, setsid daemons too (one file, not /proc)
            pids = self.cgroup.pids() | {self.proc.pid}
        else:
            pids = {self.proc.pid, *descendants(self.proc.pid)}
        return {p for p in pids if process_state(p) is not None}

    def freeze(self, timeout: float = FREEZE_TIMEOUT_S) -> bool:
        """Stop every process of this worker (``SIGSTOP``: every thread of each) and return once each is seen
        stopped; :meth:`thaw` resumes them. The parent freezes the candidate's worker while the clean reference is
        timed, so that nothing of the candidate (a helper process, a native thread, a memory-bandwidth loop) runs
        on the machine then (issue 40: such helpers made the reference many times slower on CPU;
        benchmarks/results/2026-12-05-library-docstring-figures.md).

        The stop is repeated until no process of the worker runs and no new one appears: a process forked while
        the others were being stopped is found in the next pass, and a ``SIGSTOP`` that a tracing process swallowed
        is sent again once the tracer itself is stopped. Returns False when that did not settle within ``timeout``
        seconds (the worker is then left stopped; the caller fails the pair)."""
        if not hasattr(signal, "SIGSTOP"):  # Windows: no signal stops a process; said in the harness README
            return True
        stopped: set[int] = set(self._frozen or ())
        deadline = time.monotonic() + timeout
        while True:
            found = self.processes()
            new = found - stopped
            for pid in new:
                _signal(pid, signal.SIGSTOP)
            stopped |= found
            self._frozen = stopped
            while True:  # until every process is seen stopped (a signal is delivered asynchronously)
                running = [p for p in stopped if process_state(p) in RUNNING_STATES]
                if not running:
                    break
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.0001)
                for pid in running:  # again: a tracer may have swallowed the stop before it was stopped itself
                    _signal(pid, signal.SIGSTOP)
            if not new:  # a pass found nothing new with everything stopped: nothing can fork any more
                return True
            if time.monotonic() > deadline:
                return False

    def thaw(self) -> None:
        """Resume the processes :meth:`freeze` stopped."""
        for pid in self._frozen or ():
            _signal(pid, signal.SIGCONT)
        self._frozen = None

    @property
    def frozen(self) -> bool:
        return self._frozen is not None

    # -- ending -----------------------------------------------------------------------------------------
    def kill(self, wait: bool = True) -> None:
        """SIGKILL the worker's descendants, process group and cgroup, close the pipes. With ``wait``
        False the process is reaped in the background (a large CUDA context takes seconds to tear down);
        :meth:`join` waits for that."""
        if self.proc.returncode is None or self._rep_r >= 0:  # not yet killed and reaped (its pid may be reused)
            for pid in descendants(self.proc.pid):  # the PID namespace's init among them: the namespace goes too
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.cgroup is not None:
            self.cgroup.kill()
        if wait:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
        elif self._reaper is None:
            self._reaper = threading.Thread(target=self.proc.wait, name="cudal1-reap", daemon=True)
            self._reaper.start()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for fd in (self._rep_r, self._cmd_w):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._rep_r = self._cmd_w = -1

    def join(self, timeout: float = 60.0) -> None:
        """Wait until the killed process is reaped (its GPU context gone)."""
        if self._reaper is not None:
            self._reaper.join(timeout)
        else:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass

    def close(self, wait: bool = True) -> None:
        """Kill, reap (``wait``), remove the cgroup and the worker's folder and log."""
        self.kill(wait=wait)
        if wait:
            self.cleanup()

    def cleanup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        shutil.rmtree(self.dir, ignore_errors=True)
        try:
            self.log.unlink()
        except OSError:
            pass
        with _LIVE_LOCK:
            LIVE.discard(self)


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (nearest first), from ``/proc`` (empty where there is none).

    Why the worker's process group and cgroup are not enough: a sandboxed worker's process group holds the
    outer ``bwrap`` only. Its PID namespace's init (a second ``bwrap``) runs in a session of its own, and on a
    machine where no cgroup can be made (some GPU hosts) killing the group left the init, and a helper the
    candidate had started with ``setsid``, running after the pair: the helper of
    ``tests/harness/fixtures/integrity_gpu/hog_while_idle.py`` was still on the GPU long after
    (benchmarks/results/2026-11-27-kernelbench-v0-twelfth-pass-h100.md). Killing the init ends every process of
    its namespace; an unsandboxed worker's helpers are its descendants too (until the worker dies)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat_line = f.read()
        except OSError:
            continue
        fields = stat_line[stat_line.rfind(b")") + 2 :].split()  # after "pid (comm) ": state, ppid, ...
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _oom_killed(cg: resources.Cgroup) -> bool:
    for d in cg.dirs:
        for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
            try:
                for ln in (d / name).read_text().splitlines():
                    k, _, v = ln.partition(" ")
                    if k == key and int(v) > 0:
                        return True
            except (OSError, ValueError):
                continue
        try:
            if int((d / "memory.failcnt").read_text()) > 0:
                return True
        except (OSError, ValueError):
            pass
    return False


def kill_all() -> None:
    """Kill every live worker and remove its folder (signal handlers, interpreter exit)."""
    with _LIVE_LOCK:
        workers = list(LIVE)
    for w in workers:
        try:
            w.kill(wait=True)
            w.cleanup()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
