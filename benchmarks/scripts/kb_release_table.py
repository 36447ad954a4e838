"""Tables of the ``kernelbench-v0`` release from the evaluate app's results store: for every solution file in the
set, the latest stored result whose candidate source is the file's code (docstrings aside, as
``cudal1.kernelzoo.measured.code_identity`` hashes it: the store's key hashes the whole source, and docstrings were
edited after measuring), per level and overall statistics (mean / median / geomean / p25 / p75 / max, success
rate, fast_p at 1.0 / 1.5 / 2.0), counting every
KernelBench task of the level (a task without a verified solution counts 1.0x), tasks the harness marked
``task_degenerate`` left out; then the tasks the set has no file for, with the reason its ``unsolved.json`` gives.

    python benchmarks/scripts/kb_release_table.py --store .carry/state/kb-release/results.sqlite \
        --kernelbench ../shared/kernelbench-v0 > table.md

``--baseline compile``: the same solutions against the reference run through ``torch.compile``; only part of the
set is measured against it, so its statistics are over the measured pairs (every verified speedup as measured,
below 1.0x included), never with unmeasured tasks counted as 1.0x.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
from pathlib import Path

from cudal1.harness.flags import excluded, improves, verified
from cudal1.kernelzoo.measured import code_identity
from cudal1.kernelzoo.solutions import available
from cudal1.kernelzoo.unsolved import unsolved


def latest_records(store: Path, baseline: str = "eager") -> dict[str, list[dict]]:
    """Every stored record of ``baseline`` per task, oldest first, with its source and creation time."""
    db = sqlite3.connect(store)
    out: dict[str, list[dict]] = {}
    for task, src, created, rec in db.execute(
            "select task, candidate_source, created_at, record from results order by id"):
        r = json.loads(rec)
        if r.get("baseline", "eager") != baseline:
            continue
        r["_source"], r["_created"] = src, created
        out.setdefault(task, []).append(r)
    return out


def measured_records(records: dict[str, list[dict]],
                     files: dict[str, Path]) -> tuple[list[tuple[str, dict]], list[str]]:
    """For every solution file (name -> path), the latest record whose source is the file's code (docstrings
    aside): ``([(name, record)], [names without one])``, in name order; a stored source that does not parse matches
    nothing."""
    rows, missing = [], []
    for name, path in sorted(files.items()):
        code = code_identity(path.read_text(encoding="utf-8"))
        match = [r for r in records.get(name, []) if r["_source"] and _identity(r["_source"]) == code]
        if match:
            rows.append((name, match[-1]))
        else:
            missing.append(name)
    return rows, missing


def _identity(src: str) -> str | None:
    try:
        return code_identity(src)
    except SyntaxError:
        return None


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def stats(speedups: list[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(speedups), "median": statistics.median(speedups),
            "geomean": math.exp(statistics.fmean(math.log(s) for s in speedups)), "p25": quantile(speedups, 0.25),
            "p75": quantile(speedups, 0.75), "max": max(speedups),
            **{f"fast_{p}": sum(s > p for s in speedups) / len(speedups) for p in (1.0, 1.5, 2.0)}}


def stat_cells(s: dict[str, float]) -> str:
    """The statistics columns of a summary row (mean .. fast_2.0), each cell closed by ``|``."""
    return (f"{s['mean']:.2f}x | {s['median']:.2f}x | {s['geomean']:.3f}x | {s['p25']:.2f}x | {s['p75']:.2f}x | "
            f"{s['max']:.2f}x | {s['fast_1.0']:.0%} | {s['fast_1.5']:.0%} | {s['fast_2.0']:.0%} |")


def measured_table(rows: list[tuple[str, dict]], level_of: dict[str, int], degenerate: set[str]) -> None:
    """Statistics over the measured pairs only (a baseline only part of the set was measured against)."""
    print("\n| level | pairs measured | verified | mean | median | geomean | p25 | p75 | max | fast_1.0 | fast_1.5 | "
          "fast_2.0 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lv in (1, 2, 3, "all"):
        mine = [(n, r) for n, r in rows if (lv == "all" or level_of.get(n) == lv) and n not in degenerate]
        sp = [r["speedup"] for _, r in mine if verified(r["status"], r.get("flags", [])) and r.get("speedup")]
        if not sp:
            print(f"| {lv} | {len(mine)} | 0 |" + " - |" * 9)
            continue
        print(f"| {lv} | {len(mine)} | {len(sp)} | {stat_cells(stats(sp))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--kernelbench", type=Path, required=True)
    ap.add_argument("--degenerate", type=Path, nargs="*", default=[],
                    help="more stores (e.g. the 2026-11-24 self-run) whose task_degenerate marks count too")
    ap.add_argument("--baseline", default="eager", help="eager (default) or compile: the reference's timing mode")
    args = ap.parse_args()
    records = latest_records(args.store, args.baseline)
    degenerate = {t for t, rs in records.items() if any(excluded(r.get("flags", [])) for r in rs)}
    for extra in args.degenerate:
        degenerate |= {t for t, rs in latest_records(extra).items() if any(excluded(r.get("flags", [])) for r in rs)}
    files = available("kernelbench-v0")
    rows, missing = measured_records(records, files)
    levels = {lv: sorted(p.stem for p in (args.kernelbench / f"level{lv}").glob("*.py")) for lv in (1, 2, 3)}
    level_of = {t: lv for lv, ts in levels.items() for t in ts}
    print("| task | level | status | speedup | 95% CI | ref ms | ours ms | flags | measured (UTC) | counted |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    solved: dict[str, float] = {}
    for name, r in sorted(rows, key=lambda x: (level_of.get(x[0], 9), -(x[1].get("speedup") or 0))):
        ci = r.get("speedup_ci") or [float("nan")] * 2
        ok = verified(r["status"], r.get("flags", []))
        win = improves(r["status"], r.get("flags", []), tuple(ci) if r.get("speedup_ci") else None)
        counted = "degenerate (left out)" if name in degenerate else ("yes" if win else "no (unsolved)")
        if win and name not in degenerate:
            solved[name] = r["speedup"]
        print(f"| {name} | {level_of.get(name, '?')} | {r['status']}{'' if ok else ' (not verified)'} | "
              f"{r.get('speedup') or 0:.2f}x | [{ci[0]:.2f}, {ci[1]:.2f}] | {r.get('ref_ms') or 0:.3f} | "
              f"{r.get('cand_ms') or 0:.3f} | {', '.join(r.get('flags', []))} | {r['_created'][:16]} | {counted} |")
    if missing and args.baseline != "eager":
        print(f"\n{len(missing)} of the set's {len(files)} files have no {args.baseline}-baseline result.")
    elif missing:
        print(f"\nNo stored result for the current code of: {', '.join(missing)}")
    if args.baseline != "eager":
        measured_table(rows, level_of, degenerate)
        return
    print("\n| level | tasks counted | solved | mean | median | geomean | p25 | p75 | max | fast_1.0 | fast_1.5 | "
          "fast_2.0 | geomean of the solved |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lv in (1, 2, 3, "all"):
        tasks = [t for t in level_of if (lv == "all" or level_of[t] == lv) and t not in degenerate]
        sp = [solved.get(t, 1.0) for t in tasks]
        mine = [solved[t] for t in tasks if t in solved]
        g = math.exp(statistics.fmean(math.log(x) for x in mine)) if mine else float("nan")
        print(f"| {lv} | {len(tasks)} | {len(mine)} | {stat_cells(stats(sp))} {g:.2f}x |")
    unsolved_table(level_of)


def unsolved_table(level_of: dict[str, int]) -> None:
    """The tasks the set has no file for, with the reason its ``unsolved.json`` gives (1.0x in the table above,
    unless the harness marked the task degenerate)."""
    entries = unsolved("kernelbench-v0")
    if not entries:
        return
    print(f"\nTasks without a solution file ({len(entries)}; why: `kernelbench_v0/unsolved.json`, reason codes in "
          "`cudal1.kernelzoo.unsolved.REASONS`):\n")
    print("| task | level | reason | reference ms | reference roofline | attempts | best verified attempt | pending |")
    print("|---|---|---|---|---|---|---|---|")
    for t, e in sorted(entries.items(), key=lambda x: (level_of.get(x[0], 9), x[1].reason, int(x[0].split("_")[0]))):
        b = e.best
        best = f"{b.speedup:.2f}x [{b.ci[0]:.2f}, {b.ci[1]:.2f}] ({b.measured[:10]})" if b and b.ci else "-"
        ref = f"{e.reference_ms:.4f}" if e.reference_ms else "not timed"
        roof = f"{e.reference_roofline:.0%}" if e.reference_roofline is not None else "-"
        print(f"| {t} | {level_of.get(t, '?')} | {e.reason} | {ref} | {roof} | {len(e.attempts)} | {best} | "
              f"{'yes' if e.pending else ''} |")


if __name__ == "__main__":
    main()
