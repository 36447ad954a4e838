"""Every task of the default training recipe (apps/configs/default.yaml: its train and held-out tasks at their CPU
sizes, its harness settings) as its own candidate, several times, on the CPU: the speedups an honest candidate gets
where the default run pays rewards (issue 40: before and after the timing rules, the same script on both trees).

    uv run python benchmarks/scripts/cpu_selfpairs.py --reps 3 --out FILE.json [--label after]

Writes every result's speedup, unrounded ratio, CI, flags, charge and wall time; prints a line per pair.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import yaml

from cudal1.harness import EvalConfig, EvalPool, reference_candidate
from cudal1.policy.tasks import select_tasks

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="after")
    a = ap.parse_args()
    recipe = yaml.safe_load((ROOT / "apps/configs/default.yaml").read_text())
    names = list(recipe["tasks"]["names"]) + list(recipe["evaluation"]["names"])
    tasks = select_tasks(recipe["tasks"]["suite"], names, recipe["tasks"]["sizes"])
    cfg = EvalConfig(device="cpu", cache_dir="/tmp/cudal1-cpu-selfpairs", **recipe["eval"]["harness"])
    rows = []
    t0 = time.monotonic()
    for rep in range(a.reps):
        pool = EvalPool(cfg)
        for t, r in zip(tasks, pool.map([(t, reference_candidate(t)) for t in tasks]), strict=True):
            tm = r.timing or {}
            row = {"rep": rep, "task": t.name, "status": r.status, "speedup": r.speedup,
                   "speedup_raw": tm.get("speedup_raw"), "ci": r.speedup_ci, "flags": list(r.flags),
                   "ref_ms": tm.get("ref_ms"), "charged_ms": tm.get("clock_charged_ms_per_call"),
                   "excess_ms": (tm.get("clock_check") or {}).get("excess_ms_per_call"), "wall_s": r.wall_s,
                   "reason": r.reason[:200]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    info = {"label": a.label, "machine": platform.platform(), "cpus": __import__("os").cpu_count(),
            "date": time.strftime("%Y-%m-%d"), "wall_s": round(time.monotonic() - t0, 1), "config": cfg.to_dict()}
    Path(a.out).write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
