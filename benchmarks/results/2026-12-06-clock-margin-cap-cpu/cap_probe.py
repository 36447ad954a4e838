"""Probe of the clock check's margin cap on CPU (2026-12-06): the forger of tests/harness/fixtures/timing/forge_short.py
(reports every 0.035 ms call as 0.001 ms) beside honest candidates (a warm-workspace rewrite, the task's reference as
its own candidate on two tasks, compute_once), each in a fresh one-lane pool, ``N`` times; one JSON line per pair.

    uv run python benchmarks/results/2026-12-06-clock-margin-cap-cpu/cap_probe.py N LABEL OUT_DIR

"Load": two other processes ran beside it (a Python spin loop and a 64 MB page-touching loop), started just before."""
import sys, json
from pathlib import Path
from cudal1.harness import Candidate, EvalPool, EvalConfig, load_suite, reference_candidate
FIX = Path(__file__).resolve().parents[3] / "tests" / "harness" / "fixtures"
cfg = EvalConfig(device="cpu", time_budget_s=0.25, min_rounds=10, max_rounds=60, attempts=2,
                 compile_timeout_s=120, run_timeout_s=60, cache_dir=str(Path(sys.argv[3]) / "cache"), cpu_threads=1)
tasks = {t.name: t for t in load_suite(f"dir:{FIX / 'tasks'}")}
tasks.update({t.name: t for t in load_suite(f"dir:{FIX / 'timing_tasks'}")})
n = int(sys.argv[1]); label = sys.argv[2]
cases = [("forge", "tiny_linear_relu", (FIX / "timing" / "forge_short.py").read_text()),
         ("warm_ws", "tiny_linear_relu", (FIX / "timing" / "warm_workspace.py").read_text()),
         ("ref", "tiny_linear_relu", None), ("ref_mm", "tiny_matmul_cpu", None), ("compute_once", "twice_product", (FIX / "timing" / "compute_once.py").read_text())]
out = open(Path(sys.argv[3]) / f"{label}.jsonl", "a")
for i in range(n):
    for name, tname, src in cases:
        task = tasks[tname]
        cand = reference_candidate(task) if src is None else Candidate(src, task.name)
        cand = Candidate(cand.source + f"\n# {label} {i}\n", task.name)
        pool = EvalPool(cfg)
        (r,) = pool.map([(task, cand)])
        t = r.timing or {}
        rec = {"case": name, "status": r.status, "speedup": r.speedup, "flags": sorted(r.flags), "ref_ms": t.get("ref_ms"),
               "cand_ms": t.get("cand_ms"), "chosen": t.get("attempt_chosen"), "attempts": t.get("attempts")}
        out.write(json.dumps(rec) + "\n"); out.flush()
        a = (t.get("attempts") or [{}])[t.get("attempt_chosen") or 0]
        print(name, r.status, r.speedup, sorted(r.flags), a.get("clock_excess_ms"), a.get("clock_margin_ms"), a.get("reported_cand_ms"), flush=True)
