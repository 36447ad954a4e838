"""Worker side of the worker templates (:mod:`cudal1.harness.template` is the parent's): the loop a template runs,
answering each fork request with one fresh child that becomes a worker (:func:`cudal1.harness.worker.serve`).
Runs in the template process (started by ``python -m cudal1.harness.worker --template-fd``), in the sandbox for a
candidate template; imports nothing of the parent's side."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_REQUEST_BYTES = 1 << 16  #: the largest fork request the template reads


def _not_dumpable() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _wipe(folder: str) -> None:
    """Remove everything inside ``folder`` (never following links)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                os.unlink(e.path)
        except OSError:
            pass


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # pragma: no cover
        return 1


def serve_template(sock_fd: int, send: Callable[[dict[str, Any]], None], own_fds: list[int], *, wipe: bool,
                   child: Callable[[int, int, Path], None]) -> None:
    """The template's loop: answer each fork request on ``sock_fd`` until the parent closes it.

    A request is a JSON object ``{"workdir": path, "env": {...}}`` with four descriptors: the child's command pipe
    (read end), its reply pipe (write end), its log file, and a status pipe (write end) down which the template
    writes the child's exit code (``os.waitstatus_to_exitcode``) when it ends. The answer is ``{"pid": n}`` (the
    child's pid as the template sees it) or ``{"error": why}``. ``child(cmd_fd, reply_fd, workdir)`` runs in the
    forked child and never returns."""
    _not_dumpable()
    status_fds: dict[int, int] = {}  # child pid -> the write end of its status pipe

    def reap(_sig: int = 0, _frame: Any = None) -> None:  # each child's exit code goes down its own pipe
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fd = status_fds.pop(pid, None)
            if fd is not None:
                try:
                    os.write(fd, f"{os.waitstatus_to_exitcode(status)}\n".encode())
                    os.close(fd)
                except OSError:
                    pass

    signal.signal(signal.SIGCHLD, reap)
    sock = socket.socket(fileno=sock_fd)
    send({"type": "ready", "pid": os.getpid()})
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, MAX_REQUEST_BYTES, 4)
        except OSError:
            return
        if not data:
            return
        try:
            req = json.loads(data.decode())
            workdir = Path(req["workdir"])
            env = {str(k): str(v) for k, v in dict(req.get("env", {})).items()}
            if len(fds) != 4:
                raise ValueError(f"{len(fds)} descriptors, not 4")
            if _threads() != 1:
                raise RuntimeError(f"the template runs {_threads()} threads: a fork would copy them half-way")
        except Exception as e:  # noqa: BLE001 - a bad request is answered, never fatal
            for fd in fds:
                os.close(fd)
            sock.sendall((json.dumps({"error": f"{type(e).__name__}: {e}"[:300]}) + "\n").encode())
            continue
        if wipe:
            _wipe("/tmp")
            _wipe("/dev/shm")
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # its status pipe is registered before it can end
        pid = os.fork()
        if pid == 0:  # the child: nothing of the template reachable, then a worker like any other
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
                sock.close()
                for fd in [*own_fds, *status_fds.values(), fds[3]]:
                    os.close(fd)
                cmd_fd, reply_fd, log_fd = fds[:3]
                os.dup2(log_fd, 1)
                os.dup2(log_fd, 2)
                os.close(log_fd)
                os.environ.update(env)
                workdir.mkdir(parents=True, exist_ok=True)
                os.chdir(workdir)
                child(cmd_fd, reply_fd, workdir)
            finally:
                os._exit(70)
        status_fds[pid] = fds[3]
        for fd in fds[:3]:
            os.close(fd)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        sock.sendall((json.dumps({"pid": pid}) + "\n").encode())
