"""Probe (issue 40): why a memory-bound built-in task ran 10-15% faster in some timed batches than in others on an
H200, every call of a batch alike, and why a worker tended to keep its speed from batch to batch (the reference
beside a copy of itself read 1.08-1.11x on ``mean_dim`` and ``mse_loss``, twice;
benchmarks/results/2026-11-29-harness-timing-h200.md).

    PYTHONPATH=/tmp/site python3 benchmarks/probes/probe_placement.py mean_dim,mse_loss,tanh [--procs 4]

For each task, in this process, batches of 10 calls timed as the harness times them (``Timer``: L2 flushed, device
synchronised; CUDA-event ms), each batch's mean per call, under five ways of getting the batch's inputs:

- ``same``: one input set for every batch (nothing moves);
- ``redraw``: new inputs every batch, as ``Session.batch`` draws them (the caching allocator reuses its blocks);
- ``offset``: the same values copied to a random 512-byte offset in a fresh buffer every batch;
- ``remap``: ``torch.cuda.empty_cache()`` before every draw (new ``cudaMalloc``, possibly new physical pages);
- ``procs``: ``--procs`` fresh processes, each timing ``redraw`` batches (does a process keep its speed?).

Prints one JSON line per (task, mode) with every batch's mean ms and the input's address modulo 2 MiB, and a
summary line: the spread of batch means within the mode (max/min of the 10th-90th percentiles).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cudal1.harness import load_suite
from cudal1.harness.allocator import placement_offsets
from cudal1.harness.models import load_reference, make_inputs
from cudal1.harness.timer import Timer

CALLS, BATCHES = 10, 24


def _offset_copy(args: list[Any], rng: np.random.Generator) -> list[Any]:
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_cuda:
            k = int(rng.integers(0, 4096)) * 512 // a.element_size()
            buf = torch.empty(a.numel() + k, dtype=a.dtype, device=a.device)
            v = buf[k:].view(a.shape)
            v.copy_(a)
            out.append(v)
        else:
            out.append(a)
    return out


def run_mode(task_name: str, mode: str, batches: int = BATCHES) -> dict[str, Any]:
    task = next(t for t in load_suite("builtin") if t.name == task_name)
    dev = torch.device("cuda")
    model, inp_mod, _ = load_reference(task.source, Path(tempfile.mkdtemp()), 0, dev)
    timer = Timer(dev, l2_flush_bytes=2 * int(torch.cuda.get_device_properties(dev).L2_cache_size))
    rng = np.random.default_rng(0)
    fixed = make_inputs(inp_mod, 1, dev)
    means, where = [], []
    with torch.no_grad():
        for b in range(batches):
            if mode == "same":
                args = fixed
            else:
                if mode == "remap":
                    torch.cuda.empty_cache()
                args = make_inputs(inp_mod, 100 + b, dev)
                if mode == "offset":
                    args = _offset_copy(args, rng)
            ev = []
            for _ in range(CALLS):
                _t, e, out = timer.time_call_detailed(model, args)
                ev.append(e)
            means.append(float(np.mean(ev)))
            where.append(placement_offsets([args])[0])
            del out
            if mode != "same":
                del args
    q10, q90 = np.percentile(means, [10, 90])
    return {"task": task_name, "mode": mode, "pid": os.getpid(), "batch_mean_ms": [round(m, 4) for m in means],
            "input_offset": where, "spread_10_90": round(float(q90 / q10), 4), "median_ms": round(float(np.median(means)), 4)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks")
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--mode", help=argparse.SUPPRESS)  # a child process: one mode, one task
    a = ap.parse_args()
    if a.mode:
        print(json.dumps(run_mode(a.tasks, a.mode)), flush=True)
        return 0
    for name in a.tasks.split(","):
        for mode in ("same", "redraw", "offset", "remap"):
            r = run_mode(name, mode)
            print(json.dumps(r), flush=True)
            print(f"# {name:<12} {mode:<7} median {r['median_ms']:.4f} ms  spread(p90/p10) {r['spread_10_90']:.3f}",
                  flush=True)
            torch.cuda.empty_cache()
        medians = []
        for _ in range(a.procs):
            p = subprocess.run([sys.executable, __file__, name, "--mode", "redraw"], capture_output=True, text=True,
                               check=False)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            if not lines:
                print(f"# {name} child failed: {p.stderr[-400:]}", flush=True)
                continue
            r = json.loads(lines[-1])
            print(json.dumps({**r, "mode": "procs"}), flush=True)
            medians.append(r["median_ms"])
        if medians:
            print(f"# {name:<12} procs   medians per process {medians}  max/min {max(medians) / min(medians):.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
