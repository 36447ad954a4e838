"""Summarise self-pairs (the reference timed against itself) measured for the parent's clock check, one store per
condition (e.g. workers pinned to a lane's cores or not), as a markdown table.

In a self-pair the candidate does exactly the reference's work, so every clock excess (the candidate's batch gap
beyond the reference's, per call; see :mod:`cudal1.harness.clockcheck`) is the protocol's own noise: the wider it
spreads, the more often an honest candidate is rejected ``timing_disagrees``. Needs records measured with
``CUDAL1_TIMING_DEBUG=1`` for the per-round columns (``timing.per_round_clock``).

    python benchmarks/probes/kb_clock_probe_table.py NAME=STORE.sqlite [NAME=STORE.sqlite ...]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from kb_release_table import quantile  # noqa: E402

from cudal1.harness.clockcheck import BatchClock  # noqa: E402


def _records(store: Path) -> list[dict]:
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return [json.loads(r) for (r,) in db.execute("select record from results order by created_at")]
    finally:
        db.close()


def _round_excess(rec: dict) -> list[float]:
    """Per-round excess (ms per call) over every attempt of a record, from its debug clocks."""
    rounds = (rec.get("timing") or {}).get("per_round_clock", {}).get("attempts", [])
    n = max(int((rec.get("timing") or {}).get("calls_per_batch") or 1), 1)
    return [(BatchClock(cp, cr, n).gap_ms - BatchClock(rp, rr, n).gap_ms) / n
            for att in rounds for rp, rr, cp, cr in att]


def table(name: str, recs: list[dict]) -> list[str]:
    out = [f"### {name}", "",
           "| task | status | speedup | attempts' excess (ms/call) | allowance | ref gap | rounds | round excess p10 / "
           "median / p90 | rounds > 0.04 ms |", "|---|---|---|---|---|---|---|---|---|"]
    every: list[float] = []
    for r in recs:
        t = r.get("timing") or {}
        cc = t.get("clock_check") or {}
        atts = ", ".join(f"{a['clock_excess_ms']:+.3f}" for a in t.get("attempts", []))
        ex = _round_excess(r)
        every += ex
        spread = (f"{quantile(ex, 0.1):+.3f} / {statistics.median(ex):+.3f} / {quantile(ex, 0.9):+.3f}" if ex else "-")
        over = f"{sum(e > 0.04 for e in ex)} of {len(ex)}" if ex else "-"
        sp = f"{r['speedup']:.3f}" if r.get("speedup") is not None else "-"
        out.append(f"| {r['task'].split('/')[-1][:44]} | {r['status']} | {sp} | {atts} | "
                   f"{cc.get('allowance_ms_per_call', float('nan')):.3f} | {cc.get('ref_gap_ms_per_call', float('nan')):.3f} | "
                   f"{len(ex)} | {spread} | {over} |")
    att = [a["clock_excess_ms"] for r in recs for a in (r.get("timing") or {}).get("attempts", [])]
    rej = sum("timing_disagrees" in r.get("flags", []) for r in recs)
    out += ["", f"{len(recs)} pairs, {rej} rejected timing_disagrees; attempts' excess: median "
            f"{statistics.median(att):+.4f}, median |excess| {statistics.median(abs(a) for a in att):.4f}, max "
            f"{max(att):+.4f} ms/call" if att else f"{len(recs)} pairs"]
    if every:
        out.append(f"rounds: {len(every)}, excess p10 / median / p90 {quantile(every, 0.1):+.4f} / "
                   f"{statistics.median(every):+.4f} / {quantile(every, 0.9):+.4f} ms/call")
    return out + [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", nargs="+", help="NAME=path/to/results.sqlite")
    args = ap.parse_args()
    for spec in args.stores:
        name, _, path = spec.partition("=")
        print("\n".join(table(name, _records(Path(path)))))


if __name__ == "__main__":
    main()
