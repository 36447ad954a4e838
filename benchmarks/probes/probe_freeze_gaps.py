"""Probe (issue 40): the protocol's time per call of both workers, with and without the freeze of the other worker,
on some built-in tasks as their own candidates (eager, one attempt each), to tell whether stopping a worker between
its batches changes the parent's clock around the other's.

    CUDAL1_TIMING_DEBUG=1 PYTHONPATH=/tmp/site python3 benchmarks/probes/probe_freeze_gaps.py relu,gelu,log_softmax

Prints one line per (mode, task): the speedup, the median clock excess, and the median and largest protocol time per
call of the reference (gapR) and the candidate (gapC). Run on an H200 on 2026-11-29
(benchmarks/results/2026-11-29-harness-timing-h200/call4-freeze-ab.txt).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from cudal1.harness import EvalConfig, EvalPool, load_suite, process, reference_candidate


def main(names: list[str]) -> None:
    os.environ["CUDAL1_TIMING_DEBUG"] = "1"
    tasks = [t for t in load_suite("builtin") if t.name in names]
    freeze, thaw = process.WorkerProcess.freeze, process.WorkerProcess.thaw
    for mode in ("nofreeze", "freeze"):
        if mode == "nofreeze":
            process.WorkerProcess.freeze = lambda self, timeout=0.0: True
            process.WorkerProcess.thaw = lambda self: None
        else:
            process.WorkerProcess.freeze, process.WorkerProcess.thaw = freeze, thaw
        pool = EvalPool(EvalConfig(device="cuda", cache_dir="/tmp/ab-cache", attempts=1))
        for t, r in zip(tasks, pool.map([(t, reference_candidate(t)) for t in tasks]), strict=True):
            tm = r.timing
            n = tm["calls_per_batch"]
            a = np.array(tm["per_round_clock"]["attempts"][0])
            gr, gc = (a[:, 0] - a[:, 1]) / n, (a[:, 2] - a[:, 3]) / n
            print(mode, t.name, "sp", r.speedup, "exc", round(tm["clock_check"]["excess_ms_per_call"], 3),
                  "gapR med/max", round(float(np.median(gr)), 2), round(float(gr.max()), 1),
                  "gapC med/max", round(float(np.median(gc)), 2), round(float(gc.max()), 1), "rounds", len(a),
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1].split(","))
