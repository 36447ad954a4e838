"""Where a reference worker's start and set-up time goes on a GPU, step by step, in a fresh process per task
(issue 15: the reference's start and set-up took ~7 s of each KernelBench self-pair).

    PYTHONPATH=... python3 benchmarks/scripts/setup_breakdown.py --suite kernelbench:DIR --tasks A,B
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r'''
import json, sys, time, tempfile
from pathlib import Path
t = [("start", time.perf_counter())]
def mark(name): t.append((name, time.perf_counter()))
import torch, torch._dynamo, torch.profiler
mark("import torch")
torch.empty(1, device="cuda"); torch.cuda.synchronize()
mark("cuda context")
a = torch.ones(64, 64, device="cuda"); (a @ a).sum().item()
mark("first matmul (cuBLAS)")
torch.nn.functional.conv2d(torch.ones(1, 3, 8, 8, device="cuda"), torch.ones(4, 3, 3, 3, device="cuda")).sum().item()
mark("first conv (cuDNN)")
from cudal1.harness import load_suite
from cudal1.harness.models import load_reference, make_inputs, clone_args
from cudal1.harness.task_checks import check_task
from cudal1.harness import integrity
from cudal1.harness.timing import Timer
mark("import harness")
task = next(x for x in load_suite(sys.argv[1]) if x.name == sys.argv[2])
dev = torch.device("cuda")
with torch.no_grad():
    model, inp, _ = load_reference(task.source, Path(tempfile.mkdtemp()), 1, dev)
    mark("load + build + randomise")
    args = make_inputs(inp, 1, dev)
    torch.cuda.synchronize(); mark("inputs")
    model(*clone_args(args)); torch.cuda.synchronize(); mark("first call")
    model(*clone_args(args)); torch.cuda.synchronize(); mark("second call")
    check_task(model, lambda s: make_inputs(inp, s, dev), 1)
    torch.cuda.synchronize(); mark("check_task")
    rec = integrity.OpRecorder()
    with rec:
        model(*clone_args(args))
    rec.signature(); mark("op recorder call")
print(json.dumps([(n, round(b - a, 3)) for (_, a), (n, b) in zip(t, t[1:])]))
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--tasks", required=True)
    a = ap.parse_args()
    for name in a.tasks.split(","):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, a.suite, name], capture_output=True, text=True)
        steps = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else out.stderr[-800:]
        print(json.dumps({"task": name, "process_s": round(time.perf_counter() - t0, 3), "steps": steps}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
