"""Markdown summary of self-runs (every reference submitted as its own candidate), one or more stores side by side.

    python3 benchmarks/scripts/report_selfrun.py --store before=A.sqlite --store after=B.sqlite [--out FILE.md]

Per store and level: pairs, statuses, how many self-pairs land within +-5% and +-3% (unrounded speedup), how
many carry timing_unstable, task_degenerate, task notes; the failures with their reasons; the pairs furthest from
1; wall time per pair (the parent's clock). Reads the stores only.
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import statistics
import sys
from pathlib import Path


def load(path: str) -> list[dict]:
    """Each task's latest record (a self-run has one pair a task; a pair measured again, as
    ``kb_selfrun.py --again-out-of-memory`` does, supersedes the earlier one, which stays in the store)."""
    db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    latest: dict[str, dict] = {}
    for (rec,) in db.execute("SELECT record FROM results ORDER BY id"):
        r = json.loads(rec)
        latest.pop(r["task"], None)
        latest[r["task"]] = r  # in the order of each task's latest measurement
    return list(latest.values())


def level_of(rec: dict, levels: dict[str, int]) -> str:
    return str(levels.get(rec["task"], "?"))


def raw(rec: dict) -> float | None:
    t = rec.get("timing") or {}
    return t.get("speedup_raw") if rec["status"] == "ok" else None


def section(name: str, recs: list[dict], levels: dict[str, int]) -> list[str]:
    out = [f"### {name}", "", "| level | pairs | ok | failed | within +-5% | within +-3% | timing_unstable | "
           "task_degenerate | median wall / pair (s) | sum of walls (s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    by: dict[str, list[dict]] = collections.defaultdict(list)
    for r in recs:
        by[level_of(r, levels)].append(r)
    for lv in [*sorted(by), "all"]:
        rs = recs if lv == "all" else by[lv]
        sp = [raw(r) for r in rs if raw(r) is not None]
        failed = [r for r in rs if r["status"] != "ok"]
        n5 = sum(0.95 <= s <= 1.05 for s in sp)
        n3 = sum(0.97 <= s <= 1.03 for s in sp)
        unst = sum("timing_unstable" in r["flags"] for r in rs)
        deg = sum("task_degenerate" in r["flags"] for r in rs)
        walls = [r["wall_s"] for r in rs if r.get("wall_s")]
        out.append(f"| {lv} | {len(rs)} | {len(sp)} | {len(failed)} | {n5}/{len(sp)} | {n3}/{len(sp)} | "
                   f"{unst} ({100 * unst / max(len(rs), 1):.0f}%) | {deg} | "
                   f"{statistics.median(walls) if walls else float('nan'):.2f} | {sum(walls):.0f} |")
    out.append("")
    bad = [r for r in recs if r["status"] != "ok"]
    if bad:
        out += ["Failures:", ""]
        out += [f"- `{r['task']}` ({level_of(r, levels)}): {r['status']} {sorted(r['flags'])}: {r['reason'][:300]}"
                for r in bad]
        out.append("")
    far = sorted((r for r in recs if raw(r) is not None), key=lambda r: -abs(raw(r) - 1.0))[:10]
    if far:
        out += ["Furthest from 1 (unrounded speedup, CI, flags):", ""]
        out += [f"- `{r['task']}`: {raw(r):.3f} [{r['speedup_ci'][0]:.3f}, {r['speedup_ci'][1]:.3f}] "
                f"ref {r['ref_ms']:.4g} ms {sorted(r['flags'])}" for r in far]
        out.append("")
    notes = [r for r in recs if (r.get("integrity", {}).get("task_check") or {}).get("notes")]
    if notes:
        out.append(f"Task notes (parameters without measurable effect; not degenerate): {len(notes)} tasks: "
                   + ", ".join(f"`{r['task']}`" for r in notes[:40]))
        out.append("")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", action="append", required=True, help="LABEL=PATH")
    ap.add_argument("--suite", help="suite spec to read task levels from (kernelbench:PATH or builtin)")
    ap.add_argument("--out")
    a = ap.parse_args()
    levels: dict[str, int] = {}
    if a.suite:
        from cudal1.harness import load_suite

        levels = {t.name: t.level for t in load_suite(a.suite) if t.level is not None}
    lines: list[str] = []
    for spec in a.store:
        label, _, path = spec.partition("=")
        lines += section(label, load(path), levels)
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
