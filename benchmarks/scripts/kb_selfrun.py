"""Self-run on a GPU: every task's reference submitted as its own candidate (issue 15, item 7; issue 40).

    PYTHONPATH=packages/harness/src python3 benchmarks/scripts/kb_selfrun.py --suite-dir KB --level 1 \
        --store STATE.sqlite --budget-s 540 [--label before]
    PYTHONPATH=packages/harness/src python3 benchmarks/scripts/kb_selfrun.py --suite builtin \
        --store STATE.sqlite --budget-s 540 --label builtin

Pairs are evaluated in chunks and stored as they finish (the store resumes: a pair already in it is read
back, not re-run); no new chunk starts once ``--budget-s`` seconds have passed, so a device call ends inside
its limit with every finished pair kept. At the end the WAL is folded into the store file (one file to carry
back) and a line per level says how many pairs are stored. benchmarks/scripts/report_selfrun.py turns the
store into the committed markdown.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time

from cudal1.harness import EvalConfig, EvalPool, ResultStore, load_suite, reference_candidate
from cudal1.harness.pool import out_of_device_memory


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite-dir", help="folder with level1..level3 (KernelBench layout)")
    ap.add_argument("--suite", help="any suite spec instead (builtin, builtin:level2, dir:PATH ...)")
    ap.add_argument("--level", type=int, action="append", help="levels to run (default: all)")
    ap.add_argument("--tasks", help="only these tasks (comma-separated names)")
    ap.add_argument("--store", required=True)
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--chunk", type=int, default=6)
    ap.add_argument("--input-sets", type=int, default=None,
                    help="EvalConfig.input_sets: most calls a timed batch (default: EvalConfig's, 32); a store keeps "
                         "each setting's pairs apart (issue 40: launch-bound tasks with batches that fill 20 ms)")
    ap.add_argument("--label", default="selfrun")
    ap.add_argument("--cache", default="/tmp/cudal1-selfrun-cache")
    ap.add_argument("--fork-workers", choices=["default", "yes", "no"], default="default",
                    help="EvalPool(fork_workers=...): the pool's default (started on a GPU), or forced either way")
    ap.add_argument("--lanes", type=int, default=1,
                    help="EvalPool(lanes_per_gpu=...): candidate lanes sharing the GPU (default 1, the pool's)")
    ap.add_argument("--again-out-of-memory", action="store_true",
                    help="measure again the stored pairs that ran out of GPU memory (lanes sharing the card before a "
                    "pair so failed ran again alone); the new result is added, and report_selfrun.py reads a task's "
                    "latest")
    a = ap.parse_args()
    t0 = time.monotonic()
    if bool(a.suite) == bool(a.suite_dir):
        ap.error("give one of --suite-dir and --suite")
    spec = a.suite or f"kernelbench:{a.suite_dir}"
    tasks = [t for t in load_suite(spec) if not a.level or t.level in a.level]
    if a.tasks:
        wanted = set(a.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    cfg = EvalConfig(device="cuda", cache_dir=a.cache,
                     **({"input_sets": a.input_sets} if a.input_sets is not None else {}))
    store = ResultStore(a.store)
    todo = [t for t in tasks if store.lookup(t, reference_candidate(t), cfg) is None]
    again = set()
    if a.again_out_of_memory:
        again = {t.name for t in tasks if (prev := store.lookup(t, reference_candidate(t), cfg)) is not None
                 and out_of_device_memory(prev)}
        todo = [t for t in tasks if t.name in again] + todo
    print(f"{a.label}: {len(tasks)} tasks, {len(todo) - len(again)} not stored yet"
          + (f", {len(again)} out of GPU memory to measure again" if a.again_out_of_memory else ""), flush=True)
    pool = EvalPool(cfg, fork_workers={"default": None, "yes": True, "no": False}[a.fork_workers],
                    lanes_per_gpu=a.lanes)
    done = 0
    while todo and time.monotonic() - t0 < a.budget_s:
        chunk, todo = todo[: a.chunk], todo[a.chunk:]
        pairs = [(t, reference_candidate(t)) for t in chunk]

        def show(_i: int, r) -> None:
            sp = f"{r.speedup:.3f}" if r.speedup is not None else "-"
            print(f"{time.monotonic() - t0:7.1f}s  {r.task:<50} {r.status:<13} {sp:>7}  {','.join(r.flags)}  "
                  f"{r.reason[:160] if r.status != 'ok' else ''}", flush=True)

        fresh = [p for p in pairs if p[0].name in again]
        if fresh:  # not read back from the store: measured, then added as the task's latest result
            for (t, c), r in zip(fresh, pool.map(fresh, on_result=show), strict=True):
                store.add(r, t, c, cfg, run=f"{a.label}:again")
        pool.map([p for p in pairs if p[0].name not in again], store=store, run=a.label, on_result=show)
        done += len(chunk)
    store.close()
    con = sqlite3.connect(a.store)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    n = con.execute("SELECT count(*) FROM results").fetchone()[0]
    con.close()
    print(json.dumps({"label": a.label, "evaluated_now": done, "left": len(todo), "stored": n,
                      "wall_s": round(time.monotonic() - t0, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
