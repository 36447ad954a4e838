import sys, os, json, statistics
import numpy as np
from cudal1.harness import EvalConfig, EvalPool, load_suite, reference_candidate
from cudal1.harness import process
os.environ["CUDAL1_TIMING_DEBUG"] = "1"
names = sys.argv[1].split(",")
tasks = [t for t in load_suite("builtin") if t.name in names]
orig = (process.WorkerProcess.freeze, process.WorkerProcess.thaw)
for mode in ("nofreeze", "freeze"):
    if mode == "nofreeze":
        process.WorkerProcess.freeze = lambda self, timeout=0: True
        process.WorkerProcess.thaw = lambda self: None
    else:
        process.WorkerProcess.freeze, process.WorkerProcess.thaw = orig
    pool = EvalPool(EvalConfig(device="cuda", cache_dir="/tmp/ab-cache", attempts=1))
    for t, r in zip(tasks, pool.map([(t, reference_candidate(t)) for t in tasks])):
        tm = r.timing; n = tm["calls_per_batch"]
        a = np.array(tm["per_round_clock"]["attempts"][0])
        gr = (a[:, 0] - a[:, 1]) / n; gc = (a[:, 2] - a[:, 3]) / n
        print(mode, t.name, "sp", r.speedup, "exc", round(tm["clock_check"]["excess_ms_per_call"], 3),
              "gapR med/max", round(float(np.median(gr)), 2), round(float(gr.max()), 1),
              "gapC med/max", round(float(np.median(gc)), 2), round(float(gc.max()), 1), "rounds", len(a), flush=True)
