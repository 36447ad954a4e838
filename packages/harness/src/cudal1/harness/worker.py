"""Worker process entry point: ``python -m cudal1.harness.worker --job-fd N --result-fd M --log FILE``.

Protocol (JSON lines): the worker redirects its stdout and stderr to ``FILE`` first (so nothing a
candidate prints can reach the parent as a message), imports torch, sends ``{"type": "ready"}`` on the
result pipe, reads exactly one job from the job pipe, sends ``{"type": "phase", ...}`` messages as it
goes (the parent uses them to switch from the compile time limit to the run time limit) and finally one
``{"type": "result", "result": {...}}``. Then it exits: every job gets a fresh process.

Job kinds: ``evaluate`` (see :mod:`cudal1.harness.runner`), ``build`` (import a candidate with no GPU
visible so that its extensions compile into the build cache) and ``check_task`` (import a task file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any


def _sender(fd: int, token: str = ""):
    def send(msg: dict[str, Any]) -> None:
        if token:
            msg = {**msg, "token": token}
        data = (json.dumps(msg) + "\n").encode()
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]

    return send


def _read_job(fd: int) -> dict[str, Any]:
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        chunks.append(b)
        if b.endswith(b"\n"):
            break
    return json.loads(b"".join(chunks).decode())


def _build(job: dict[str, Any]) -> dict[str, Any]:
    from pathlib import Path

    from .buildcache import clear_stale_locks, is_build_failure
    from .loading import CandidateLoadError, load_candidate

    ext = Path(job["extensions_dir"])
    ext.mkdir(parents=True, exist_ok=True)
    clear_stale_locks(ext)
    t0 = time.perf_counter()
    try:
        load_candidate(job["candidate_source"], Path(job["workdir"]))
    except CandidateLoadError as e:
        cause = e.__cause__ or e
        status = "failed" if is_build_failure(cause) else "not_built"
        return {"status": status, "reason": str(e), "seconds": time.perf_counter() - t0}
    return {"status": "ok", "reason": "", "seconds": time.perf_counter() - t0}


def _check_task(job: dict[str, Any]) -> dict[str, Any]:
    """Load a task, build its reference with randomised parameters and run the degeneracy checks."""
    from pathlib import Path

    import torch

    from .runner import exact_fp32, load_reference, make_inputs
    from .task_checks import check_task

    device = torch.device(job.get("device", "cpu"))
    seed = int(job.get("seed", 0))
    try:
        exact_fp32()
        with torch.no_grad():
            model, inp, _ = load_reference(job["task_source"], Path(job["workdir"]), seed, device)
            res = check_task(model, lambda s: make_inputs(inp, s, device), seed)
        return {"status": "degenerate" if res["degenerate"] else "ok", "findings": res["findings"]}
    except BaseException as e:  # noqa: BLE001
        return {"status": "task_error", "findings": [f"{type(e).__name__}: {e}"[:500]]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="cudal1.harness.worker")
    ap.add_argument("--job-fd", type=int, required=True)
    ap.add_argument("--result-fd", type=int, required=True)
    ap.add_argument("--log", required=True)
    a = ap.parse_args(argv)
    log_fd = os.open(a.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    send = _sender(a.result_fd)

    import torch  # noqa: F401 - the expensive imports happen before the job arrives
    import torch._dynamo  # noqa: F401 - importing it rebinds torch.manual_seed & co; do it before any snapshot
    import torch.profiler  # noqa: F401

    if os.environ.get("CUDAL1_WARM_CUDA") == "1":
        # a GPU lane's spare worker creates its CUDA context and NVML handle while it waits, so the pair
        # it will run does not pay for them (the context is small and launches nothing)
        torch.empty(1, device="cuda")
        from .environment import _nvml

        _nvml()
    send({"type": "ready", "pid": os.getpid()})
    job = _read_job(a.job_fd)
    os.close(a.job_fd)
    # every later message carries the job's token; the parent treats a message without it as forged
    send = _sender(a.result_fd, str(job.pop("token", "")))
    os.environ.update(job.get("env", {}))
    kind = job.get("kind")
    try:
        if kind == "evaluate":
            from .runner import evaluate_in_worker

            res = evaluate_in_worker(job, send)
        elif kind == "build":
            res = _build(job)
        elif kind == "check_task":
            res = _check_task(job)
        else:
            res = {"status": "runtime_error", "reason": f"unknown job kind {kind!r}"}
    except BaseException as e:  # noqa: BLE001 - a harness bug must still come back as a result
        import traceback

        traceback.print_exc()
        res = {"status": "runtime_error", "reason": f"harness error in worker: {type(e).__name__}: {e}"[:800],
               "flags": ["harness_error"]}
    send({"type": "result", "result": res})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
