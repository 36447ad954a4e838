"""Probe (issue 40): what the CPU harness verifies when something outside it loads the machine.

``tests/harness/test_timing_integrity.py`` passes on a quiet 2-core VM; with one spinning process beside it, 8 of 12
runs failed (2026-12-06): the `helpers while idle` adversary (``fixtures/timing/fork_helpers.py``) verified ``ok``
at 3.36x and 4.48x with only ``timing_unstable``, and the reference's honest twin got ``timing_unresolved``. This
probe evaluates that rule's two cases (the adversary and the reference as its own candidate, two torch threads each,
one pool: as the test does) ``--repeats`` times with ``--load`` spinning processes (``yes``) beside the pool, and
prints per pair the verdict, the speedup and its interval, what a reward pays for it
(:func:`cudal1.rewards.paid_speedup`), the reference's time alone and paired, and each bucket's ratio.

    uv run python benchmarks/probes/probe_outside_load.py --load 1 --repeats 4
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--load", type=int, default=1, help="spinning processes beside the pool (0: a quiet machine)")
    ap.add_argument("--repeats", type=int, default=4, help="pools, one after another")
    ap.add_argument("--threads", type=int, default=2, help="torch threads of both workers (the test's: 2)")
    a = ap.parse_args()
    if a.load < 0 or a.repeats < 1 or a.threads < 1:
        ap.error("--load must be at least 0, --repeats and --threads at least 1")
    sys.path.insert(0, str(ROOT / "tests" / "harness"))
    from test_timing_integrity import CASES, case_candidate, tasks  # the test's own cases and fixtures

    from cudal1.harness import EvalConfig, EvalPool
    from cudal1.rewards.shaping import paid_speedup

    by_task = tasks()
    cases = [c for c in CASES if c.rule == "helpers while idle"]
    for rep in range(a.repeats):
        cfg = EvalConfig(device="cpu", time_budget_s=0.25, min_rounds=10, max_rounds=60, attempts=2,
                         compile_timeout_s=120, run_timeout_s=60, cache_dir=tempfile.mkdtemp(), cpu_threads=a.threads)
        spinners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(a.load)]
        try:
            pool = EvalPool(cfg)
            try:
                results = pool.map([(by_task[c.task], case_candidate(c, by_task[c.task])) for c in cases])
            finally:
                pool.close()
        finally:
            for s in spinners:
                s.kill()
        for case, res in zip(cases, results, strict=True):
            t = res.timing or {}
            ratios = [r / c for r, c in zip(t.get("ref_bucket_ms") or [], t.get("cand_bucket_ms") or [], strict=True)]
            print(json.dumps({
                "repeat": rep, "load": a.load, "case": f"{case.kind}:{case.name}", "status": res.status,
                "speedup": res.speedup, "ci": [round(x, 3) for x in res.speedup_ci or []], "flags": list(res.flags),
                "verified": res.verified, "paid": paid_speedup(res) if res.status == "ok" else None,
                "ref_alone_ms": t.get("reference_alone_ms"), "ref_paired_ms": t.get("ref_ms"),
                "drift": t.get("reference_drift"), "ref_cpu_wait": t.get("reference_cpu_wait"),
                "ref_alone_cpu_wait": t.get("reference_alone_cpu_wait"),
                "attempt_waits": [x.get("ref_cpu_wait") for x in t.get("attempts", [])], "bucket_ratios": [round(x, 3) for x in ratios],
                "ratio_spreads": [round(x["ratio_spread"], 3) for x in t.get("attempts", [])],
                "attempt_chosen": t.get("attempt_chosen"), "reason": res.reason[:200]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
