"""Probe (issue 40): does a fresh process run a task's reference at its own speed, and why?

The KernelBench self-run of 2026-12-06 (three lanes on an H100) verified ``9_ResNet18``'s reference against itself at
1.30x [1.29, 1.31] and ``7_GoogleNetInceptionV1``'s at 1.13x, both stable: the candidate's fresh process ran the same
code faster than the reference's (benchmarks/results/2026-12-06-kb-selfrun-after-h100.md). Candidates of such a task
are paid for nothing. This probe separates the explanations, each in fresh processes of its own:

- ``fresh``: load the reference, time it (the harness's ``Timer``: L2 flushed, synchronised, CUDA-event ms);
- ``checked``: run ``check_task`` first, as the reference worker's setup does (parameters redrawn, many calls);
- ``pressure``: load the model and inputs, fill the card's memory until ``--free-gib`` is left (as other lanes'
  processes can), make the first calls there, then free the filler and time: a library that chose a plan needing
  less workspace in its first call (cuDNN passes over plans whose workspace it cannot get, and keeps its choice for
  the process's life) shows it here;
- ``emptied``: as ``fresh``, but the allocator's cache is emptied after the first calls, as ``pressure`` does after
  its filler (on an H100 on 2026-12-06, the four ``pressure`` processes of ResNet18 all ran at the fastest fresh
  process's speed while fresh ones spread 1.38x: this separates the emptied cache from the failed first calls);

and per process: the median of ``--batches`` batch means (host clock around synchronised calls, as the harness
reports, and CUDA events, the device's own time), the free memory at the first call, and the CUDA kernels
one call ran (names). A difference in kernel names between modes or processes says the libraries chose differently;
the same names at different speeds say the process (host launch speed, memory placement) differs.

    PYTHONPATH=/tmp/site python3 benchmarks/probes/probe_self_pair_gap.py \\
        --suite kernelbench:.carry/kb/kernelbench-v0 9_ResNet18,7_GoogleNetInceptionV1 [--procs 3] [--free-gib 0.1]

Prints a JSON line per process and a ``#`` summary line per task and mode. ``--device cpu`` runs the same on the
CPU (a smoke check: no kernel names there).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODES = ("fresh", "checked", "pressure", "emptied")


def _fill(device: Any, free_gib: float) -> list[Any]:
    """Allocate the card's free memory down to about ``free_gib`` GiB (blocks of 1 GiB, then halves down to 1 MiB;
    kept alive by the caller)."""
    import torch

    keep = []
    block = 1 << 30
    while block >= 1 << 20:  # 1 GiB blocks, then smaller ones down to 1 MiB
        free, _total = torch.cuda.mem_get_info(device)
        if free - block < free_gib * (1 << 30):
            block //= 2
            continue
        keep.append(torch.empty(block, dtype=torch.uint8, device=device))
    return keep


def run_process(suite: str, task_name: str, mode: str, device_name: str, batches: int, calls: int,
                free_gib: float) -> dict[str, Any]:
    """One process's measurement of one task in one mode (run in a child process by :func:`main`)."""
    import torch

    from cudal1.harness import integrity, load_suite
    from cudal1.harness.models import exact_fp32, load_reference, make_inputs
    from cudal1.harness.task_checks import check_task
    from cudal1.harness.timer import Timer

    task = next((t for t in load_suite(suite) if t.name == task_name), None)
    if task is None:
        raise SystemExit(f"no task {task_name!r} in {suite}")
    exact_fp32()  # the numerics both of the harness's workers run with (no TF32, no cuDNN autotuning)
    dev = torch.device(device_name)
    if dev.type == "cuda":
        if dev.index is None:  # set_device needs an index: "cuda" is the current device
            dev = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(dev)
    model, inp_mod, _ = load_reference(task.source, Path(tempfile.mkdtemp()), 0, dev)
    if mode == "checked":
        check_task(model, lambda s: make_inputs(inp_mod, s, dev), 0)
    l2 = 2 * int(torch.cuda.get_device_properties(dev).L2_cache_size) if dev.type == "cuda" else 0
    timer = Timer(dev, l2_flush_bytes=l2)
    means, event_means = [], []
    with torch.no_grad():
        args = make_inputs(inp_mod, 1, dev)
        filler = _fill(dev, free_gib) if mode == "pressure" and dev.type == "cuda" else []
        free_at_first = torch.cuda.mem_get_info(dev)[0] / (1 << 30) if dev.type == "cuda" else None
        oom_at_first = False
        try:
            for _ in range(3):
                timer.time_call(model, args)
        except torch.OutOfMemoryError:  # too little left even for the activations: say so, time it anyway
            oom_at_first = True
        del filler  # the first calls chose their plans; the timed ones run with the memory back
        if dev.type == "cuda" and mode in ("pressure", "emptied"):
            torch.cuda.empty_cache()
        for b in range(batches):
            args = make_inputs(inp_mod, 100 + b, dev)
            host, events = [], []
            for _ in range(calls):
                h, e, _out = timer.time_call_detailed(model, args)
                host.append(h)
                events.append(e if e is not None else h)
            means.append(statistics.fmean(host))
            event_means.append(statistics.fmean(events))
        names = integrity.kernel_names(lambda: model(*args), dev)
    return {"task": task_name, "mode": mode, "pid": os.getpid(), "ended_unix_s": round(time.time(), 1),
            "median_ms": round(statistics.median(means), 4),
            "event_median_ms": round(statistics.median(event_means), 4),
            "batch_mean_ms": [round(m, 4) for m in means],
            "free_gib_at_first_call": None if free_at_first is None else round(free_at_first, 2),
            "out_of_memory_at_first_call": oom_at_first,
            "kernels": names}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", help="comma-separated task names")
    ap.add_argument("--suite", required=True, help="suite spec, e.g. kernelbench:PATH or builtin")
    ap.add_argument("--procs", type=int, default=3, help="fresh processes per mode")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--free-gib", type=float, default=0.1, help="memory left free for the first calls in the pressure "
                    "mode (GiB)")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # a child process: one task, one mode
    a = ap.parse_args()
    if a.child:
        print(json.dumps(run_process(a.suite, a.tasks, a.child, a.device, a.batches, a.calls, a.free_gib)), flush=True)
        return 0
    modes = [m for m in a.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        ap.error(f"unknown modes {unknown}; choose from {list(MODES)}")
    for name in a.tasks.split(","):
        seen: dict[str, list[dict[str, Any]]] = {}
        for _ in range(a.procs):  # the modes in turn, so that a card whose speed drifts over minutes hits each alike
            for mode in modes:
                p = subprocess.run([sys.executable, __file__, name, "--suite", a.suite, "--child", mode,
                                    "--device", a.device, "--batches", str(a.batches), "--calls", str(a.calls),
                                    "--free-gib", str(a.free_gib)], capture_output=True, text=True, check=False)
                lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
                if not lines:
                    print(f"# {name} {mode}: the child failed: {p.stderr[-600:]}", flush=True)
                    continue
                r = json.loads(lines[-1])
                print(json.dumps(r), flush=True)
                seen.setdefault(mode, []).append(r)
        base = next((rs[0]["kernels"] for rs in seen.values() if rs and rs[0]["kernels"] is not None), None)
        for mode, rs in seen.items():
            med = [r["median_ms"] for r in rs]
            ev = [r["event_median_ms"] for r in rs]
            differ = [sorted(set(r["kernels"] or []) ^ set(base or [])) for r in rs]
            print(f"# {name} {mode:<8} medians per process {med} max/min {max(med) / min(med):.3f} "
                  f"(CUDA events {ev}) "
                  f"free GiB {[r['free_gib_at_first_call'] for r in rs]} kernels differing from the first process: "
                  f"{[len(d) for d in differ]} {differ[-1][:6] if differ and differ[-1] else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
