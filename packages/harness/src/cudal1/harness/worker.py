"""Worker process entry point:
``python -m cudal1.harness.worker --role reference|candidate --cmd-fd N --reply-fd M --workdir DIR``.

Protocol (JSON lines, :mod:`cudal1.harness.protocol`): the worker imports torch, sends ``{"type": "ready"}``
on the reply pipe, then answers each command read from the command pipe with exactly one reply carrying the
command's ``id``, until the pipe closes. Its stdout and stderr are a log file the parent opened; nothing
printed there is ever parsed. Commands are handled by the session of the worker's role (:mod:`cudal1.harness.session`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _writer(fd: int):
    def send(msg: dict[str, Any]) -> None:
        data = (json.dumps(msg, allow_nan=False, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    return send


def _reader(fd: int):
    buf = bytearray()

    def read() -> dict[str, Any] | None:
        while b"\n" not in buf:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            buf.extend(chunk)
        i = buf.index(b"\n")
        line = bytes(buf[:i])
        del buf[: i + 1]
        return json.loads(line.decode())

    return read


def _build(cmd: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Import a candidate with no GPU visible so that its extensions compile into the build cache."""
    from .buildcache import clear_stale_locks, is_build_failure
    from .loading import CandidateLoadError, load_candidate

    ext = Path(cmd["extensions_dir"])
    ext.mkdir(parents=True, exist_ok=True)
    clear_stale_locks(ext)
    t0 = time.perf_counter()
    try:
        load_candidate(cmd["candidate_source"], workdir)
    except CandidateLoadError as e:
        cause = e.__cause__ or e
        status = "failed" if is_build_failure(cause) else "not_built"
        return {"type": "built", "status": status, "reason": str(e)[:2000], "seconds": time.perf_counter() - t0}
    return {"type": "built", "status": "ok", "reason": "", "seconds": time.perf_counter() - t0}


def serve(role: str, send: Any, read: Any, workdir: Path) -> None:
    """Answer commands until the command pipe closes (the worker's life after its imports)."""
    from .address_space import limit_address_space
    from .candidate_session import CandidateSession
    from .reference_session import ReferenceSession

    limit_address_space()  # a CPU worker without a memory cgroup: its cap, set now that the imports are mapped
    outbox = workdir / "outbox"
    outbox.mkdir(parents=True, exist_ok=True)
    session = {"reference": ReferenceSession, "candidate": CandidateSession}[role](workdir, outbox)
    send({"type": "ready", "pid": os.getpid()})
    while True:
        try:
            cmd = read()
        except (ValueError, UnicodeDecodeError):
            break
        if cmd is None or cmd.get("op") == "exit":
            break
        try:
            if cmd.get("op") == "build" and role == "candidate":
                reply = _build(cmd, workdir)
            else:
                reply = session.handle(cmd)
        except BaseException as e:  # noqa: BLE001 - a harness bug must still come back as a reply
            import traceback

            traceback.print_exc()
            reply = {"type": "error", "status": "runtime_error", "flag": "harness_error",
                     "reason": f"harness error in worker: {type(e).__name__}: {e}"[:800]}
        reply["id"] = cmd.get("id", "")
        try:
            send(reply)
        except ValueError as e:  # a value JSON cannot carry (NaN): say so instead of dying
            send({"type": "error", "status": "runtime_error", "flag": "harness_error", "id": reply["id"],
                  "reason": f"reply not serialisable: {e}"[:300]})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _imports() -> None:
    import torch  # noqa: F401 - the expensive imports happen before the first command
    import torch._dynamo  # noqa: F401 - importing it rebinds torch.manual_seed & co; do it before any snapshot
    import torch.profiler  # noqa: F401

    from . import candidate_session, reference_session  # noqa: F401 - and the harness's own modules


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="cudal1.harness.worker")
    ap.add_argument("--role", choices=["reference", "candidate"], required=True)
    ap.add_argument("--cmd-fd", type=int, required=True)
    ap.add_argument("--reply-fd", type=int, required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--template-fd", type=int, help="serve as a template: fork one worker of --role per request "
                    "arriving on this socket (cudal1.harness.template_server)")
    ap.add_argument("--wipe", action="store_true", help="a template inside the sandbox: empty /tmp and /dev/shm "
                    "before each fork")
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    send, read = _writer(a.reply_fd), _reader(a.cmd_fd)
    _imports()
    if a.template_fd is not None:
        from .template_server import serve_template

        serve_template(a.template_fd, send, [a.cmd_fd, a.reply_fd], wipe=a.wipe,
                       child=lambda cmd_fd, reply_fd, workdir: serve(a.role, _writer(reply_fd),
                                                                      _reader(cmd_fd), workdir))
        os._exit(0)
    warm = os.environ.get("CUDAL1_WARM_CUDA")
    if warm in WARM_LEVELS:
        warm_cuda(libraries=warm == "libraries")
    serve(a.role, send, read, Path(a.workdir))


#: values of ``CUDAL1_WARM_CUDA`` (set by a GPU lane for its spare workers: :func:`cudal1.harness.lanes.device_lanes`)
WARM_LEVELS = ("1", "libraries")


def warm_cuda(*, libraries: bool) -> None:
    """What a GPU lane's spare worker does while it waits, so that the pair it will run does not pay for it: its
    CUDA context and NVML handle (small; nothing launched); with ``libraries`` also the first use of what every
    correctness trial needs (the harness's digest kernel: Triton's import, its launcher and the kernel itself; a
    seeded draw on the device) and of cuBLAS (a 64 x 64 product), on a few KiB of memory. Runs before the worker
    says it is ready, so before any candidate code, and a timing phase waits for it like any start
    (:mod:`cudal1.harness.gate`). On an H100 a fresh candidate's first trial took 0.93-2.39 s against about 0.04 s
    for each later one (benchmarks/results/2026-12-06-pair-breakdown-h100.md). With ``libraries`` the first trials
    were 0.42-0.63 s on an H100, but four of six wrong or correct candidates on spares warmed this way ended
    ``runtime_error`` (benchmarks/results/2026-12-06-first-trial-warm-h100.md): the GPU test saw the worker die of
    SIGSEGV, most likely the kernel-cache seeding that rewrote in place the launcher library this warm-up had loaded
    (now replaced by rename: :func:`cudal1.harness.buildcache.seed_cache`). After that fix an H100 passed
    ``tests/harness/test_gpu.py::test_spares_warming_libraries_give_the_same_verdicts``
    (benchmarks/results/2026-12-06-kb-selfrun-after-h100.md); a mixed batch beside ``"context"`` decides the default."""
    import torch

    torch.empty(1, device="cuda")
    from .environment import _nvml

    _nvml()
    if not libraries:
        return
    from .digest import _kernel_for

    x = torch.ones(1, 4096, device="cuda")
    kernel = _kernel_for(x)
    if kernel is not None:  # no Triton: trials take the PyTorch digest, nothing to warm
        kernel.row_sums(x, 0, 1)
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    m = torch.randn(64, 64, device="cuda", generator=g)
    (m @ m).sum().item()
    del x, m


if __name__ == "__main__":
    main()
