"""Self-pairs of the default recipe's layer-norm tasks (its CPU sizes and harness settings) in one variant of the harness:
uv run python benchmarks/results/2026-12-05-cpu-process-draws/selfpairs_by_variant.py default|nosandbox|started REPS [TASKS]
(nosandbox: the pool told no sandbox is available, so candidates run unsandboxed; started: workers not forked)."""
import json, sys, statistics as st
from pathlib import Path
import yaml
from cudal1.harness import EvalConfig, EvalPool, reference_candidate, sandbox
from cudal1.policy.tasks import select_tasks
ROOT = Path(__file__).resolve().parents[3]  # the repository
variant, reps = sys.argv[1], int(sys.argv[2])
names = sys.argv[3].split(",") if len(sys.argv) > 3 else ["add_layernorm", "rms_norm"]
recipe = yaml.safe_load((ROOT / "apps/configs/default.yaml").read_text())
tasks = select_tasks(recipe["tasks"]["suite"], names, recipe["tasks"]["sizes"])
cfg = EvalConfig(device="cpu", cache_dir="/tmp/cudal1-exp", **recipe["eval"]["harness"])
if variant == "nosandbox":
    import dataclasses
    real = sandbox.detect()
    sandbox.detect = lambda: dataclasses.replace(real, available=False, reason="experiment")
    import cudal1.harness.pool as poolmod
    poolmod.sandbox.detect = sandbox.detect
kw = {}
if variant == "started":
    kw["fork_workers"] = False
rows = []
for rep in range(reps):
    pool = EvalPool(cfg, **kw)
    for t, r in zip(tasks, pool.map([(t, reference_candidate(t)) for t in tasks]), strict=True):
        tm = r.timing or {}
        rows.append(dict(v=variant, rep=rep, task=t.name, status=r.status, raw=round(tm.get("speedup_raw") or 0, 3),
                         ref=round(tm.get("ref_ms") or 0, 4), cand=round(tm.get("cand_ms") or 0, 4),
                         alone=round(tm.get("reference_alone_ms") or 0, 4), flags=r.flags, sandboxed=pool.sandboxed))
        print(json.dumps(rows[-1]), flush=True)
    pool.close()
