"""The evaluation report (the CUDA-L1 paper's tables) for one or more solution sets across baselines.

Input: :class:`Entry` records, one per (solution set, baseline, task): the harness's
:class:`~cudal1.harness.EvalResult` plus the candidate's source (for technique tags) and the task's level.
Output of :func:`build_report`: a plain dict (JSON-serialisable) with

- ``summary[set][baseline][level]``: :func:`cudal1.harness.summary.summarize` figures (mean, median, p25,
  p75, max, geomean of speedups over ok results; success rate and fast_p over all counted tasks; status and
  integrity-flag counts) per level (``"1"``, ``"2"``, ...) and ``"all"``;
- ``tasks``: one row per task with each (set, baseline)'s status, speedup, flags and, where device peaks
  and the task's work are known, the fraction of the roofline the reference and the candidate attain;
- ``techniques[set]``: per technique tag (:mod:`cudal1.harness.techniques`), how many of the set's solutions
  carry it and the speedups (against the first baseline) of those that are ok: the paper's technique table.

:func:`render_markdown` turns it into markdown; :mod:`cudal1.harness.report_html` into a self-contained
HTML page with plots.

Example:
    >>> from cudal1.harness import EvalResult
    >>> e = Entry("zoo", "eager", "relu", 1, EvalResult("relu", "ok", speedup=1.5), "import triton\\n")
    >>> build_report([e])["summary"]["zoo"]["eager"]["all"]["median"]
    1.5
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import BASELINES
from .roofline import DevicePeaks, TaskWork, roofline_ms
from .summary import summarize
from .techniques import TECHNIQUES, detect_techniques
from .types import EvalResult

__all__ = ["Entry", "ReportError", "build_report", "render_markdown", "table_rows"]

FAST_PS = (1.0, 1.5, 2.0)


class ReportError(ValueError):
    """The report cannot be built from what was given (no entries, a set name used twice ...)."""


@dataclass(frozen=True)
class Entry:
    """One evaluated (set, baseline, task). ``source``: the candidate's source (for technique tags);
    ``reference``: the task's source (lets the tags tell fusion / algebraic rewrite); ``library``: source
    of the kernel-library modules the candidate calls (:func:`cudal1.harness.techniques.library_sources`);
    ``level``: the task's level or None."""

    set: str
    baseline: str
    task: str
    level: int | None
    result: EvalResult
    source: str = ""
    reference: str | None = None
    library: str = ""


def _level_key(level: int | None) -> str:
    return str(level) if level is not None else "-"


def _clean(x: Any) -> Any:
    """NaN -> None recursively (JSON has no NaN)."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def _order(names: Sequence[str], preferred: Sequence[str]) -> list[str]:
    return [n for n in preferred if n in names] + sorted(n for n in set(names) if n not in preferred)


def build_report(entries: Sequence[Entry], *, works: Mapping[str, TaskWork] | None = None,
                 peaks: DevicePeaks | None = None, title: str = "cudal1 evaluation report",
                 set_order: Sequence[str] | None = None, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report dict of ``entries`` (see the module docstring). ``works`` (task name -> TaskWork) and
    ``peaks`` add roofline fractions; ``meta`` is copied into the report (command, versions ...).

    Raises:
        ReportError: no entries, or two entries for the same (set, baseline, task).
    """
    if not entries:
        raise ReportError("nothing to report: no evaluated (set, baseline, task) was given")
    seen: set[tuple[str, str, str]] = set()
    for e in entries:
        key = (e.set, e.baseline, e.task)
        if key in seen:
            raise ReportError(f"two results for set {e.set!r}, baseline {e.baseline!r}, task {e.task!r}; "
                              "give one per (set, baseline, task)")
        seen.add(key)
    sets = list(set_order) if set_order else list(dict.fromkeys(e.set for e in entries))
    missing = {e.set for e in entries} - set(sets)
    if missing:
        raise ReportError(f"set_order lacks {sorted(missing)}")
    baselines = _order([e.baseline for e in entries], BASELINES)
    levels = sorted({_level_key(e.level) for e in entries}, key=lambda s: (s == "-", s))
    primary = baselines[0]

    summary: dict[str, Any] = {}
    for s in sets:
        summary[s] = {}
        for b in baselines:
            mine = [e for e in entries if e.set == s and e.baseline == b]
            if not mine:
                continue
            per = {lv: summarize([e.result for e in mine if _level_key(e.level) == lv], FAST_PS) for lv in levels
                   if any(_level_key(e.level) == lv for e in mine)}
            per["all"] = summarize([e.result for e in mine], FAST_PS)
            summary[s][b] = per

    tags: dict[tuple[str, str], tuple[str, ...]] = {}
    for e in entries:
        if (e.set, e.task) not in tags and e.source:
            tags[(e.set, e.task)] = detect_techniques(e.source, e.reference, e.library)

    level_of = {e.task: e.level for e in entries}
    task_names = sorted(level_of, key=lambda n: (level_of[n] is None, level_of[n] or 0, n))
    by_key = {(e.set, e.baseline, e.task): e for e in entries}
    rows = []
    for name in task_names:
        level = level_of[name]
        work = works.get(name) if works else None
        bound = roofline_ms(work, peaks) if (work is not None and peaks is not None) else None
        row: dict[str, Any] = {"task": name, "level": level, "results": {}, "techniques": {},
                               "flops": work.flops if work else None,
                               "ideal_bytes": work.ideal_bytes if work else None,
                               "roofline_ms": bound}
        for s in sets:
            row["techniques"][s] = list(tags.get((s, name), ()))
            for b in baselines:
                e = by_key.get((s, b, name))
                if e is None:
                    continue
                r = e.result
                row["results"][f"{s}|{b}"] = {
                    "status": r.status, "speedup": r.speedup, "ci": list(r.speedup_ci) if r.speedup_ci else None,
                    "ref_ms": r.ref_ms, "cand_ms": r.cand_ms, "flags": list(r.flags), "reason": r.reason[:300],
                    "uses_custom_kernel": r.uses_custom_kernel,
                    "ref_roofline": (bound / r.ref_ms) if (bound and r.ref_ms) else None,
                    "cand_roofline": (bound / r.cand_ms) if (bound and r.cand_ms and r.status == "ok") else None,
                }
        rows.append(row)

    techniques: dict[str, list[dict[str, Any]]] = {}
    for s in sets:
        mine = [e for e in entries if e.set == s and e.baseline == primary]
        table = []
        for tag, desc in TECHNIQUES.items():
            with_tag = [e for e in mine if tag in tags.get((s, e.task), ())]
            if not with_tag:
                continue
            sp = sorted(e.result.speedup for e in with_tag if e.result.status == "ok" and e.result.speedup)
            table.append({
                "tag": tag, "description": desc, "solutions": len(with_tag), "share": len(with_tag) / len(mine),
                "ok": len(sp), "median": statistics.median(sp) if sp else None,
                "geomean": math.exp(statistics.fmean(math.log(x) for x in sp)) if sp else None,
                "max": sp[-1] if sp else None,
            })
        techniques[s] = table

    env = next((e.result.environment for e in entries if e.result.environment), {})
    devices = sorted({e.result.device for e in entries})
    return _clean({
        "title": title,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "sets": sets, "baselines": baselines, "levels": levels, "primary_baseline": primary,
        "devices": devices, "environment": env, "peaks": peaks.to_dict() if peaks else None,
        "fast_ps": list(FAST_PS), "summary": summary, "tasks": rows, "techniques": techniques,
        "meta": dict(meta or {}),
    })


# ------------------------------------------------------------------------------------------- tables
def _x(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def table_rows(report: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables as (title, header, rows) of strings, shared by the markdown and HTML pages."""
    sets, baselines = report["sets"], report["baselines"]
    out: list[tuple[str, list[str], list[list[str]]]] = []
    fast_cols = [f"fast_{p:g}" for p in report["fast_ps"]]
    for b in baselines:
        header = ["set", "level", "tasks", "ok", "success", "mean", "median", "p25", "p75", "max", "geomean",
                  *fast_cols]
        rows = []
        for s in sets:
            per = report["summary"].get(s, {}).get(b)
            if not per:
                continue
            for lv in [*(report["levels"] if len(report["levels"]) > 1 else []), "all"]:
                f = per.get(lv)
                if f is None:
                    continue
                rows.append([s, "all" if lv == "all" else ("no level" if lv == "-" else f"level {lv}"), str(f["tasks"]), str(f["ok"]),
                             _pct(f["success_rate"]), _x(f["mean"]), _x(f["median"]), _x(f["p25"]), _x(f["p75"]),
                             _x(f["max"]), _x(f["geomean"]), *[_pct(f[c]) for c in fast_cols]])
        out.append((f"Speedup over {b}", header, rows))

    header = ["set", "baseline", "failures (status)", "integrity / measurement flags", "left out"]
    rows = []
    for s in sets:
        for b in baselines:
            f = report["summary"].get(s, {}).get(b, {}).get("all")
            if f is None:
                continue
            bad = ", ".join(f"{k} {v}" for k, v in f["statuses"].items() if v and k != "ok") or "none"
            flags = ", ".join(f"{k} {v}" for k, v in f["flags"].items()) or "none"
            rows.append([s, b, bad, flags, str(f.get("excluded", 0))])
    out.append(("Failures and flags", header, rows))

    for s in sets:
        header = ["technique", "what the source contains", "solutions", "share", "ok",
                  f"median ({report['primary_baseline']})", "geomean", "max"]
        rows = [[t["tag"], t["description"], str(t["solutions"]), _pct(t["share"]), str(t["ok"]), _x(t["median"]),
                 _x(t["geomean"]), _x(t["max"])] for t in report["techniques"].get(s, [])]
        out.append((f"Techniques of {s} (tags found statically in the source)", header, rows))

    cols = [(s, b) for b in baselines for s in sets]
    header = ["task", "level", *[f"{s} / {b}" if len(sets) > 1 else b for s, b in cols]]
    if report.get("peaks"):
        header += [f"roofline ({s}, {report['primary_baseline']})" for s in sets] + ["roofline (reference)"]
    rows = []
    for row in report["tasks"]:
        cells = [row["task"], "-" if row["level"] is None else str(row["level"])]  # level None: no level
        for s, b in cols:
            r = row["results"].get(f"{s}|{b}")
            if r is None:
                cells.append("")
            elif r["status"] == "ok":
                flags = [f for f in r["flags"] if f != "uses_custom_kernel"]
                cells.append(_x(r["speedup"]) + (f" ({', '.join(flags)})" if flags else ""))
            else:
                cells.append(r["status"])
        if report.get("peaks"):
            p = report["primary_baseline"]
            cells += [_pct((row["results"].get(f"{s}|{p}") or {}).get("cand_roofline")) for s in sets]
            ref = next((r["ref_roofline"] for k, r in row["results"].items()
                        if k.endswith(f"|{p}") and r["ref_roofline"] is not None), None)
            cells.append(_pct(ref))
        rows.append(cells)
    out.append(("Per task", header, rows))
    return out


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def describe_setup(report: Mapping[str, Any]) -> list[str]:
    """Lines naming the device, versions and measured peaks the report's figures come from."""
    env = report.get("environment") or {}
    lines = [f"Created {report['created']}; device {', '.join(report['devices'])}."]
    gpu = env.get("gpu_name")
    versions = ", ".join(f"{k} {env[k]}" for k in ("torch", "triton", "cuda_runtime", "cudnn", "driver", "python")
                         if env.get(k))
    where = f"GPU {gpu} (sm {env.get('compute_capability', '?')})" if gpu else f"CPU {env.get('cpu', '')}".strip()
    lines.append(f"{where}; {versions}." if versions else f"{where}.")
    peaks = report.get("peaks")
    if peaks:
        lines.append(f"Measured peaks on {peaks['name']}: copy {peaks['copy_bytes_per_s'] / 1e9:.0f} GB/s (read + "
                     f"written), fp32 matmul {peaks['fp32_flop_per_s'] / 1e12:.1f} TFLOP/s (TF32 off); roofline "
                     "fraction = the roofline's time for the reference's FLOPs and ideal bytes / measured time "
                     "(above 100%: less work than the reference does).")
    for k, v in (report.get("meta") or {}).items():
        lines.append(f"{k}: {v}")
    lines.append("Speedup statistics are over ok results; success rate and fast_p (correct and faster than p x) "
                 "over all counted tasks; tasks flagged task_degenerate / task_error are left out.")
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as markdown: setup, one summary table per baseline, failures and flags, technique tables,
    the per-task table."""
    parts = [f"# {report['title']}", "", *describe_setup(report), ""]
    for title, header, rows in table_rows(report):
        parts += [f"## {title}", "", _md_table(header, rows) if rows else "(none)", ""]
    return "\n".join(parts)
