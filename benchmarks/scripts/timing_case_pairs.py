"""One candidate of the timing-rule fixtures (tests/harness/fixtures/timing/) or a task's own reference, evaluated
again and again with the suite's fast config (on the CPU, or ``--device cuda``), each run in a fresh pool (as the
suite's first pair of a task sees it), optionally beside outside load: what the parent's clock saw (excess, margin,
charge) and the verdict.

    uv run python benchmarks/scripts/timing_case_pairs.py --case forge_short --runs 4
    uv run python benchmarks/scripts/timing_case_pairs.py --case reference --runs 4 --load
    uv run python benchmarks/scripts/timing_case_pairs.py --case forge_short --fork-workers --runs 3

``--load`` starts two processes beside the evaluations (a Python loop and a NumPy memory-bandwidth loop, one per core
of a 2-core machine) and stops them after. One JSON line per run (printed, and appended to ``--out`` if given).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "harness" / "fixtures"
LOADS = ["import time\nwhile True:\n    sum(i * i for i in range(100000)); time.sleep(0.002)",
         "import numpy as np\na = np.ones(20_000_000)\nwhile True:\n    b = a * 2.0"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", default="forge_short", help="a fixture of tests/harness/fixtures/timing, or 'reference'")
    ap.add_argument("--task", default="tiny_linear_relu", help="a task of tests/harness/fixtures/{tasks,timing_tasks}")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load", action="store_true", help="two busy processes beside the evaluations")
    ap.add_argument("--fork-workers", action="store_true", help="both workers forked from templates (a CPU pool's "
                    "default; without the flag, both started)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--out", help="append the JSON lines to this file")
    a = ap.parse_args()

    from cudal1.harness import Candidate, EvalConfig, EvalPool, load_suite, reference_candidate

    tasks = {t.name: t for d in ("tasks", "timing_tasks") for t in load_suite(f"dir:{FIX / d}")}
    task = tasks[a.task]
    cand = reference_candidate(task) if a.case == "reference" else Candidate(
        source=(FIX / "timing" / f"{a.case}.py").read_text(), task=task.name, origin="test")
    loads = [subprocess.Popen([sys.executable, "-c", code]) for code in LOADS] if a.load else []
    try:
        time.sleep(1.0 if loads else 0.0)
        for run in range(a.runs):
            cfg = EvalConfig(device=a.device, time_budget_s=0.25, min_rounds=10, max_rounds=60, attempts=2,
                             compile_timeout_s=120, run_timeout_s=60, cache_dir=tempfile.mkdtemp(), cpu_threads=1)
            t0 = time.monotonic()
            res = EvalPool(cfg, fork_workers=a.fork_workers).map([(task, cand)])[0]  # False: started, whatever the device
            t = res.timing
            cc = t.get("clock_check") or {}
            chosen = (t.get("attempts") or [{}])[t.get("attempt_chosen", 0)]
            rec = {"case": a.case, "task": a.task, "device": a.device, "run": run, "load": a.load,
                   "fork_workers": a.fork_workers,
                   "status": res.status, "speedup": res.speedup, "verified": res.verified, "flags": sorted(res.flags),
                   "ref_ms": t.get("ref_ms"), "cand_ms": t.get("cand_ms"), "reported_cand_ms": chosen.get("reported_cand_ms"),
                   "excess_ms": cc.get("excess_ms_per_call"), "margin_ms": chosen.get("clock_margin_ms"),
                   "charged_ms": t.get("clock_charged_ms_per_call"), "ref_gap_ms": cc.get("ref_gap_ms_per_call"),
                   "calls_per_batch": t.get("calls_per_batch"), "committed": t.get("committed_batches"),
                   "rounds": cc.get("rounds"), "wall_s": round(time.monotonic() - t0, 2), "reason": res.reason}
            line = json.dumps(rec)
            print(line, flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(line + "\n")
    finally:
        for p in loads:
            p.kill()


if __name__ == "__main__":
    main()
