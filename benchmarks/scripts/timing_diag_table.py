"""Per-pair timing diagnostics of self-run stores made with ``CUDAL1_TIMING_DEBUG=1`` (per-call times and every
round's parent clock are then in each record): the reported speedup beside what a round's mean call, a round's
median call and CUDA events give without the clock charge, the charge, and the protocol's time per call of each
worker (the parent's clock less the reported calls).

    python3 benchmarks/scripts/timing_diag_table.py STORE.sqlite[.gz] ...

Prints a markdown table (issue 40, benchmarks/results/2026-11-29-harness-timing-h200.md).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np


def records(path: str) -> list[dict]:
    """Every record of a results store (``.sqlite``, or ``.sqlite.gz`` read through a temporary copy), in order."""
    p = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        if p.suffix == ".gz":
            plain = Path(tmp) / p.stem
            with gzip.open(p) as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
            p = plain
        con = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        try:
            return [json.loads(r[0]) for r in con.execute("SELECT record FROM results ORDER BY id")]
        finally:
            con.close()


def row(r: dict) -> str:
    t = r["timing"]
    n = t["calls_per_batch"]
    pc = t["per_call"]
    k = len(pc["ref_ms"]) // n
    ref = np.asarray(pc["ref_ms"][: k * n]).reshape(k, n)
    cand = np.asarray(pc["cand_ms"][: k * n]).reshape(k, n)
    mean = float(np.median(ref.mean(1) / cand.mean(1)))
    med = float(np.median(np.median(ref, 1) / np.median(cand, 1)))
    att = t["attempts"][t["attempt_chosen"]]
    clocks = np.asarray(t["per_round_clock"]["attempts"][t["attempt_chosen"]])
    gap_r = float(np.median(clocks[:, 0] - clocks[:, 1])) / n
    gap_c = float(np.median(clocks[:, 2] - clocks[:, 3])) / n
    ev = (t.get("events") or {}).get("speedup_raw")
    return (f"| {r['task']} | {t['speedup_raw']:.3f} | {mean:.3f} | {med:.3f} | {ev if ev is None else f'{ev:.3f}'} | "
            f"{t['ref_ms']:.4f} | {att.get('clock_charged_ms', 0.0):.4f} | {att['clock_excess_ms']:+.4f} | "
            f"{gap_r:.3f} | {gap_c:.3f} | {n} | {k} | {r['wall_s']:.1f} |")


def main(argv: list[str]) -> int:
    print("| task | speedup (charged) | mean-call ratio | median-call ratio | CUDA events | ref ms/call | charged "
          "ms/call | excess ms/call | ref protocol ms/call | cand protocol ms/call | calls/batch | rounds | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in argv:
        for r in records(path):
            if r["status"] == "ok" and "per_call" in (r.get("timing") or {}):
                print(row(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
