"""Aggregate figures over a set of results (the paper's and KernelBench's summary statistics).

Also :class:`Progress`, the line a run prints per finished pair (``cudal1-eval``, ``apps/evaluate.py``).

Speedup statistics (mean, median, p25, p75, max, geometric mean) are over results with status ``ok``;
``success_rate`` and ``fast_p`` are over all evaluated tasks: fast_p is the fraction of tasks that are
correct *and* faster than ``p`` x (KernelBench's definition). Results on a degenerate task
(``task_degenerate``) or on a task that failed itself (status ``task_error``) are left out of every figure
and counted separately (:attr:`EvalResult.excluded`, from the flag registry).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .types import STATUSES, EvalResult


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of already sorted values."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(results: Sequence[EvalResult], fast_ps: Sequence[float] = (1.0, 1.5, 2.0)) -> dict[str, Any]:
    """Summary figures of ``results`` (see module docstring). Speedups in x."""
    n = len(results)
    counted = [r for r in results if not r.excluded]
    ok = [r for r in counted if r.status == "ok" and r.speedup is not None]
    sp = sorted(float(r.speedup) for r in ok)  # type: ignore[arg-type]
    statuses = Counter(r.status for r in results)
    out: dict[str, Any] = {
        "tasks": n,
        "ok": len([r for r in counted if r.status == "ok"]),
        "statuses": {s: statuses.get(s, 0) for s in STATUSES},
        "success_rate": (len([r for r in counted if r.status == "ok"]) / len(counted)) if counted else math.nan,
        "excluded": n - len(counted),
        # ok results the harness trusts (EvalResult.verified: no reject / suspect / task flag)
        "verified": len([r for r in counted if r.verified]),
        "mean": statistics.fmean(sp) if sp else math.nan,
        "median": statistics.median(sp) if sp else math.nan,
        "p25": percentile(sp, 25),
        "p75": percentile(sp, 75),
        "max": sp[-1] if sp else math.nan,
        "geomean": math.exp(statistics.fmean(math.log(s) for s in sp)) if sp else math.nan,
    }
    denom = len(counted)
    for p in fast_ps:
        out[f"fast_{p:g}"] = (sum(1 for s in sp if s > p) / denom) if denom else math.nan
    flags = Counter(f for r in results for f in r.flags)
    out["flags"] = dict(sorted(flags.items()))
    return out


def format_summary(s: dict[str, Any]) -> str:
    """A small aligned text table of :func:`summarize` output."""

    def f(x: Any, pct: bool = False) -> str:
        if isinstance(x, float):
            if math.isnan(x):
                return "-"
            return f"{100 * x:.1f}%" if pct else f"{x:.2f}x"
        return str(x)

    rows = [
        ("tasks", str(s["tasks"])),
        ("ok", str(s["ok"])),
        ("verified", str(s.get("verified", "-"))),
        ("success rate", f(s["success_rate"], pct=True)),
        ("speedup mean", f(s["mean"])),
        ("speedup median", f(s["median"])),
        ("speedup p25 / p75", f"{f(s['p25'])} / {f(s['p75'])}"),
        ("speedup max", f(s["max"])),
        ("geometric mean", f(s["geomean"])),
    ]
    rows += [(f"fast_{k[5:]}", f(v, pct=True)) for k, v in s.items() if k.startswith("fast_")]
    bad = ", ".join(f"{k}={v}" for k, v in s["statuses"].items() if v and k != "ok")
    if bad:
        rows.append(("failures", bad))
    if s["flags"]:
        rows.append(("flags", ", ".join(f"{k}={v}" for k, v in s["flags"].items())))
    if s.get("excluded"):
        rows.append(("left out (task_degenerate / task_error)", str(s["excluded"])))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(w)}  {v}" for k, v in rows)


class Progress:
    """A progress bar line per finished pair on stderr (``[####......]  3/60  12s  name  ok  1.02x``)."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet, self.done, self.t0 = total, quiet, 0, time.monotonic()

    def __call__(self, _i: int, r: EvalResult) -> None:
        self.done += 1
        if self.quiet:
            return
        sp = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        extra = f"  [{', '.join(r.flags)}]" if r.flags else ""
        why = f"  {r.reason[:100]}" if r.status != "ok" else ""
        w = len(str(self.total))
        el = time.monotonic() - self.t0
        filled = round(20 * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (20 - filled)
        print(f"[{bar}] {self.done:>{w}}/{self.total} {el:5.0f}s  {r.task:<36} {r.status:<13} {sp:>7}{extra}{why}",
              file=sys.stderr, flush=True)
