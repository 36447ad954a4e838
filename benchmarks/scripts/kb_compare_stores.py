"""Set two harness result stores side by side for the ``kernelbench-v0`` solutions both measured: per file of the
set or of its pending folder, the latest record whose code is the file's (as kb_release_table.py picks it) from each
store, with status, speedup, 95% CI and both sides' times, and the geometric mean of the speedup ratio (B over A)
over the pairs verified in both. For a change to the harness's measurement (e.g. pinning a lane's workers,
2026-11-27): A before, B after.

    python benchmarks/scripts/kb_compare_stores.py --a BEFORE/results.sqlite --b AFTER/results.sqlite \
        [--baseline eager] [--names before after]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from kb_release_table import latest_records, measured_records  # noqa: E402

from cudal1.harness.flags import verified  # noqa: E402
from cudal1.kernelzoo.solutions import KERNELBENCH_V0, available  # noqa: E402

#: files measured once and then withdrawn from the set (they count as unsolved); compared too
PENDING = KERNELBENCH_V0 / "pending"


def cell(r: dict) -> str:
    t = r.get("timing") or {}
    ci = t.get("ci") or [math.nan, math.nan]
    sp = r.get("speedup")
    return (f"{r['status']} | {sp:.2f}x | [{ci[0]:.2f}, {ci[1]:.2f}] | {t.get('ref_ms', math.nan):.3f} | "
            f"{t.get('cand_ms', math.nan):.3f}" if sp else f"{r['status']} | - | - | - | -")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", type=Path, required=True, help="the first store (before)")
    ap.add_argument("--b", type=Path, required=True, help="the second store (after)")
    ap.add_argument("--baseline", default="eager")
    ap.add_argument("--names", nargs=2, default=["A", "B"], help="column titles of the two stores")
    args = ap.parse_args()
    files = {**{p.stem: p for p in PENDING.glob("*.py")}, **available("kernelbench-v0")}
    a = dict(measured_records(latest_records(args.a, args.baseline), files)[0])
    b = measured_records(latest_records(args.b, args.baseline), files)[0]
    na, nb = args.names
    print(f"| task | {na}: status | speedup | 95% CI | ref ms | ours ms | {nb}: status | speedup | 95% CI | ref ms | "
          f"ours ms | {nb} / {na} |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    logs = []
    for name, rb in b:
        ra = a.get(name)
        if ra is None:
            continue
        both = all(verified(r["status"], r.get("flags", [])) and r.get("speedup") for r in (ra, rb))
        ratio = rb["speedup"] / ra["speedup"] if both else None
        if ratio:
            logs.append(math.log(ratio))
        print(f"| {name} | {cell(ra)} | {cell(rb)} | {f'{ratio:.3f}' if ratio else '-'} |")
    if logs:
        print(f"\n{len(logs)} pairs verified in both; geomean of {nb} / {na}: {math.exp(sum(logs) / len(logs)):.3f} "
              f"(min {math.exp(min(logs)):.3f}, max {math.exp(max(logs)):.3f})")


if __name__ == "__main__":
    main()
