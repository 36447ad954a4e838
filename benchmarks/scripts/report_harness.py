"""Turn one or two bench_harness.py JSON files into the committed markdown report (issue 2 figures).

    python3 benchmarks/scripts/report_harness.py RUN1.json [RUN2.json] --out benchmarks/results/NAME.md

Figures: per-task eager time of the reference (median of bucket means, ms) and speedup of the
reference against itself; share of tasks with speedup in [0.95, 1.05]; agreement of two runs (median
over tasks of |s1 - s2| / s1); total wall time; harness overhead per pair (parent wall time minus the
timed calls); GPU memory the harness held beyond the task's own (peak of the worker minus the peak of
one eager forward of the reference with one input set).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from cudal1.harness import load_suite


def load(p: str) -> dict:
    return json.loads(Path(p).read_text())


def env_line(run: dict) -> str:
    res = run.get("results") or []
    e = res[0]["environment"] if res else {}
    return (f"GPU {e.get('gpu_name')} (cc {e.get('compute_capability')}, {e.get('sm_count')} SMs, "
            f"{e.get('gpu_memory_gib')} GiB), driver {e.get('driver')}, torch {e.get('torch')}, CUDA "
            f"{e.get('cuda_runtime')}, triton {e.get('triton')}, cuDNN {e.get('cudnn')}, Python {e.get('python')}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--notes", help="markdown file appended as a Notes section")
    a = ap.parse_args()
    runs = [load(p) for p in a.runs]
    r1 = runs[0]
    res1 = {r["task"]: r for r in r1["results"]}
    res2 = {r["task"]: r for r in runs[1]["results"]} if len(runs) > 1 and runs[1].get("results") else {}
    lines = [f"# Harness benchmark: built-in suite, each reference as its own candidate ({r1['date']})", "",
             env_line(r1), "",
             f"Config: baseline `{r1['config']['baseline']}`, {r1['config']['trials']} correctness trials, "
             f"{r1['config']['buckets']} buckets, time budget {r1['config']['time_budget_s']} s per attempt, "
             f"{r1['config']['input_sets']} input sets. Produced by `benchmarks/scripts/bench_harness.py`; "
             f"raw results in the JSON files beside this one.", ""]
    ok = [r for r in res1.values() if r["status"] == "ok"]
    sp = [r["speedup"] for r in ok]
    within = sum(1 for s in sp if 0.95 <= s <= 1.05)
    eager = [r["ref_ms"] for r in ok]
    in_range = sum(1 for m in eager if 1.0 <= m <= 15.0)
    overhead = [r["wall_s"] - r["timing"].get("timed_s", 0.0) for r in ok]
    extra = []
    for r in ok:
        m = r["environment"].get("memory", {})
        if "harness_peak_bytes" in m and "task_peak_bytes" in m:
            extra.append((m["harness_peak_bytes"] - m["task_peak_bytes"]) / 2**30)
    lines += ["## Summary", "", "| figure | value | target |", "|---|---|---|",
              f"| tasks | {len(res1)} ({len(ok)} ok) | all ok |",
              f"| reference vs itself: speedup in [0.95, 1.05] | {within}/{len(sp)} ({100 * within / max(len(sp), 1):.1f}%) | >= 95% |",
              f"| eager reference time in [1, 15] ms | {in_range}/{len(eager)} | all |",
              f"| total wall time, run 1 ({Path(a.runs[0]).name}) | {r1['suite_wall_s'] / 60:.1f} min | <= 15 min |"]
    if res2:
        common = [t for t in res1 if t in res2 and res1[t]["status"] == res2[t]["status"] == "ok"]
        dev = [abs(res1[t]["speedup"] - res2[t]["speedup"]) / res1[t]["speedup"] for t in common]
        dev_raw = [abs(res1[t]["timing"]["speedup_raw"] - res2[t]["timing"]["speedup_raw"]) / res1[t]["timing"]["speedup_raw"] for t in common]
        tdev = [abs(res1[t]["ref_ms"] - res2[t]["ref_ms"]) / res1[t]["ref_ms"] for t in common]
        lines += [f"| total wall time, run 2 ({Path(a.runs[1]).name}) | {runs[1]['suite_wall_s'] / 60:.1f} min | <= 15 min |",
                  f"| two runs: median over tasks of abs(s1 - s2) / s1 (rounded speedups) | {100 * statistics.median(dev):.2f}% (max {100 * max(dev):.2f}%) | <= 2% |",
                  f"| two runs: same, unrounded speedups | {100 * statistics.median(dev_raw):.2f}% (max {100 * max(dev_raw):.2f}%) | |",
                  f"| two runs: median change of the eager reference time | {100 * statistics.median(tdev):.2f}% | |"]
    if overhead:
        lines.append(f"| harness overhead per pair (wall - timed calls): median / max | {statistics.median(overhead):.2f} s / {max(overhead):.2f} s | <= 3 s |")
    if extra:
        lines.append(f"| GPU memory held beyond the task's own: median / max | {statistics.median(extra):.2f} / {max(extra):.2f} GiB | |")
    li = r1.get("load_inline")
    if li:
        ev = li["evals"]
        br = li.get("build_record") or {}
        lines += [f"| load_inline candidate: build (CPU build worker) | {br.get('status')} in {br.get('seconds', 0):.1f} s | once |",
                  f"| load_inline eval 1 / eval 2: status, built in timing worker, import | {ev[0]['status']}, {ev[0]['build'].get('built_now')}, {ev[0]['build'].get('import_s')} s / {ev[1]['status']}, {ev[1]['build'].get('built_now')}, {ev[1]['build'].get('import_s')} s | eval 2 does no build |",
                  f"| load_inline eval 1 / eval 2 wall time | {ev[0]['wall_s']:.1f} s / {ev[1]['wall_s']:.1f} s | |"]
    lines += ["", "Overhead counts everything the parent waits for besides the timed calls: worker start (hidden "
              "when the next worker is pre-started), loading the task twice and the candidate, drawing inputs, "
              "5 correctness trials (3 forwards each), warm-up, capture of clocks. Memory beyond the task's own "
              "includes the candidate's own copy of the weights (here the same size as the reference's), three "
              "rotating input sets, per-trial input clones and the L2 flush buffer (2 x L2).", "",
              "## Per task", "",
              "| task | level | status | eager ms | speedup (run 1) | 95% CI | speedup (run 2) | flags |",
              "|---|---|---|---|---|---|---|---|"]
    levels = {t.name: t.level for t in load_suite("builtin")}
    for t, r in sorted(res1.items(), key=lambda kv: (levels.get(kv[0], 9), kv[0])):
        lvl = levels.get(t, "")
        ci = r.get("speedup_ci") or []
        s2 = res2.get(t, {}).get("speedup") if res2 else None
        lines.append(f"| {t} | {lvl} | {r['status']} | {r['ref_ms']:.3f} | {r['speedup']} | "
                     f"{f'{ci[0]:.3f}-{ci[1]:.3f}' if ci else '-'} | {s2 if s2 is not None else '-'} | {', '.join(r['flags'])} |"
                     if r["status"] == "ok" else
                     f"| {t} | {lvl} | {r['status']} | - | - | - | - | {r['reason'][:80]} |")
    if a.notes:
        lines += ["", "## Notes", "", Path(a.notes).read_text().strip()]
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:20]))


if __name__ == "__main__":
    main()
