"""Self-pairs of the default recipe's tasks (its CPU sizes and harness settings) with each worker's batch steps
(run with CUDAL1_TIMING_DEBUG=1): uv run python benchmarks/results/2026-12-05-cpu-commit-fit/selfpair_steps.py REPS
[TASKS] [OUT.json]"""
import json, sys, time, statistics as st
from pathlib import Path
import yaml
from cudal1.harness import EvalConfig, EvalPool, reference_candidate
from cudal1.policy.tasks import select_tasks
ROOT = Path(__file__).resolve().parents[3]  # the repository
recipe = yaml.safe_load((ROOT / "apps/configs/default.yaml").read_text())
names = list(recipe["tasks"]["names"]) + list(recipe["evaluation"]["names"])
if len(sys.argv) > 2: names = sys.argv[2].split(",")
tasks = select_tasks(recipe["tasks"]["suite"], names, recipe["tasks"]["sizes"])
cfg = EvalConfig(device="cpu", cache_dir="/tmp/cudal1-cpuexp", **recipe["eval"]["harness"])
out = []
for rep in range(int(sys.argv[1])):
    pool = EvalPool(cfg)
    for t, r in zip(tasks, pool.map([(t, reference_candidate(t)) for t in tasks]), strict=True):
        rec = r.to_dict() if hasattr(r, "to_dict") else r.__dict__
        tm = rec.get("timing") or {}
        steps = (tm.get("per_call") or {}).get("steps_ms") or []
        def agg(side, step):
            xs = [b[side].get(step, 0) for b in steps]
            return (round(min(xs), 2), round(st.median(xs), 2), round(max(xs), 2)) if xs else None
        line = dict(task=t.name, status=rec.get("status"), raw=round(tm.get("speedup_raw") or 0, 3),
                    ci=[round(x, 3) for x in (tm.get("ci") or [])], n=tm.get("calls_per_batch"),
                    commit=tm.get("committed_batches"), charged=tm.get("clock_charged_ms_per_call"),
                    gaps=(tm.get("clock_check") or {}).get("cand_gap_ms_per_call"), rgap=(tm.get("clock_check") or {}).get("ref_gap_ms_per_call"),
                    ref_ms=tm.get("ref_ms"), cand_ms=tm.get("cand_ms"), flags=rec.get("flags"),
                    steps={f"{s}.{k}": agg(s, k) for s in ("cand", "ref") for k in ("draw", "calls", "reply", "digest")})
        print(json.dumps(line), flush=True)
        out.append(line)
    pool.close() if hasattr(pool, "close") else None
Path(sys.argv[3] if len(sys.argv) > 3 else "/tmp/cpuexp/out.json").write_text(json.dumps(out, indent=1))
