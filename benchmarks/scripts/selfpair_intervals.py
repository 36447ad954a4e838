"""How often an honest copy's speedup interval excludes 1, and how a process spread changes it (issue 40).

    uv run python benchmarks/scripts/selfpair_intervals.py LABEL=STORE[,STORE...] ... [--sd 0,0.01,0.025]

Each STORE is a self-run's results store (``.sqlite`` or ``.sqlite.gz``: every reference submitted as its own
candidate, kb_selfrun.py); several stores after one label are read as one run (each task's latest pair). Per label:
the verified pairs, the spread (standard deviation of the natural log) of their unrounded speedups, and for each
process spread in ``--sd`` how many intervals lie wholly above 1 (a copy that ``flags.improves`` would pay as an
improvement, were it not flagged ``same_as_reference``) and wholly below, after the interval is widened as the
harness widens it (:func:`cudal1.harness.timing.widen_for_processes`). Reads the stores only; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from cudal1.harness.timing import widen_for_processes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing_diag_table import records  # noqa: E402 - its sibling script: a store's records, .gz or not


def latest_ok(paths: list[str]) -> list[dict]:
    """Each task's latest record across ``paths`` (read in order), verified ``ok`` pairs with timing only."""
    latest = {r["task"]: r for p in paths for r in records(p)}
    return [r for r in latest.values() if r["status"] == "ok" and (r.get("timing") or {}).get("ci")]


def counts(recs: list[dict], sd: float) -> tuple[int, int]:
    """(intervals wholly above 1, wholly below 1) once widened by ``sd``."""
    above = below = 0
    for r in recs:
        t = r["timing"]
        lo, hi = widen_for_processes(t["speedup_raw"], t["ci"][0], t["ci"][1], sd)
        above += lo > 1.0
        below += hi < 1.0
    return above, below


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=STORE[,STORE...]")
    ap.add_argument("--sd", default="0,0.01,0.015,0.02,0.025,0.03,0.04",
                    help="process spreads (natural log) to try, comma-separated")
    a = ap.parse_args()
    sds = [float(x) for x in a.sd.split(",") if x]
    head = "| run | verified pairs | sd of log speedup | " + " | ".join(f"sd {s:g}: above / below" for s in sds) + " |"
    lines = [head, "|" + "---|" * (3 + len(sds))]
    for spec in a.runs:
        label, sep, paths = spec.partition("=")
        if not sep or not paths:
            ap.error(f"{spec!r}: write LABEL=STORE[,STORE...]")
        recs = latest_ok(paths.split(","))
        if not recs:
            ap.error(f"{label}: no verified pair with an interval in {paths}")
        logs = [math.log(r["timing"]["speedup_raw"]) for r in recs]
        cells = [f"{x} / {y}" for x, y in (counts(recs, s) for s in sds)]
        lines.append(f"| {label} | {len(recs)} | {statistics.pstdev(logs):.4f} | " + " | ".join(cells) + " |")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
