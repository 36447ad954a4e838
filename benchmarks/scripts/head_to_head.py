"""Two solution sets through one harness on the same KernelBench tasks: ours (kernelbench-v0) against another
system's, per task and per level (issue 43, item 4).

    # CUDA-L1's released kernels as one file per task ({"1"|"2"|"3": [{task_id, ref_code, custom_code, ...}]})
    uv run python benchmarks/scripts/head_to_head.py convert ../shared/cuda-l1-release/h100.json \
        --kernelbench ../shared/kernelbench-v0 --out /tmp/cuda-l1-h100
    # both sets on the tasks both have a file for (or --tasks / --sample N), resumable through one store
    uv run python benchmarks/scripts/head_to_head.py run --kernelbench ../shared/kernelbench-v0 \
        --ours kernelbench-v0 --theirs /tmp/cuda-l1-h100 --store h2h.sqlite --device cuda --budget-s 540
    # the comparison from the store alone (what has been measured so far)
    uv run python benchmarks/scripts/head_to_head.py report --kernelbench ../shared/kernelbench-v0 \
        --ours kernelbench-v0 --theirs /tmp/cuda-l1-h100 --store h2h.sqlite --device cuda

Each pair is the harness's (sandboxed, two processes, the eager baseline unless ``--baseline``); a pair already in
the store is read back, not run again. The table counts a speedup only when the harness verified it (no suspect,
reject or task flag); a failed or unverified pair counts as 1.0 in the level geomean (as the release's own figures
count unsolved tasks), and the verified-only geomean is printed beside it. ``ahead``: ours verified and faster than
theirs, or ours verified and theirs not; ``behind``: the same the other way; ``tie``: both verified within 2% of each
other, or neither verified.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import NamedTuple

TIE = 0.02  #: relative difference under which two verified speedups are a tie


class Side(NamedTuple):
    """One set's figure on one task: the harness's status, speedup and whether it verified it."""

    status: str
    speedup: float | None
    verified: bool

    @property
    def counted(self) -> float:
        """The speedup the comparison counts: the verified one, else 1.0."""
        return self.speedup if self.verified and self.speedup is not None else 1.0


def convert(release: dict, kernelbench: Path, out: Path) -> dict[str, list[str]]:
    """Write each entry's ``custom_code`` of a CUDA-L1-style release as ``out/<task name>.py``; the task is the file
    of ``kernelbench/level<L>`` numbered ``task_id``. Returns ``{"written": [...], "no_code": [...],
    "no_task": [...], "ref_differs": [...]}`` (an entry whose ``ref_code`` is not the task file's source is still
    written, and named)."""
    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, list[str]] = {"written": [], "no_code": [], "no_task": [], "ref_differs": []}
    for level, entries in sorted(release.items()):
        files = {int(m.group(1)): f for f in (kernelbench / f"level{level}").glob("*.py")
                 if (m := re.match(r"(\d+)_", f.name))}
        for e in entries:
            tid = int(e["task_id"])
            code = e.get("custom_code")
            task_file = files.get(tid)
            if task_file is None:
                seen["no_task"].append(f"level{level}/{tid}")
                continue
            if not code:
                seen["no_code"].append(task_file.stem)
                continue
            if e.get("ref_code") is not None and e["ref_code"].strip() != task_file.read_text(encoding="utf-8").strip():
                seen["ref_differs"].append(task_file.stem)
            (out / f"{task_file.stem}.py").write_text(code, encoding="utf-8")
            seen["written"].append(task_file.stem)
    return seen


def compare(rows: dict[str, tuple[int, Side, Side]]) -> tuple[list[str], dict[int, dict[str, float]]]:
    """Per-task lines and per-level figures of ``{task: (level, ours, theirs)}``: geomeans (counted and verified
    only) and ahead / behind / tie counts."""
    lines = ["| level | task | ours | theirs | |", "|---|---|---|---|---|"]
    levels: dict[int, dict[str, list]] = {}
    for name, (level, ours, theirs) in sorted(rows.items(), key=lambda kv: (kv[1][0], kv[0])):
        lv = levels.setdefault(level, {"ours": [], "theirs": [], "ours_v": [], "theirs_v": [], "verdict": []})
        lv["ours"].append(ours.counted)
        lv["theirs"].append(theirs.counted)
        if ours.verified and ours.speedup is not None:
            lv["ours_v"].append(ours.speedup)
        if theirs.verified and theirs.speedup is not None:
            lv["theirs_v"].append(theirs.speedup)
        a, b = ours.counted, theirs.counted
        if ours.verified != theirs.verified:  # one side has no verified solution: the other is ahead, whatever its
            verdict = "ahead" if ours.verified else "behind"  # figure (a verified 0.95x still beats a wrong file)
        else:
            verdict = "tie" if abs(a - b) <= TIE * max(a, b) else ("ahead" if a > b else "behind")
        lv["verdict"].append(verdict)
        lines.append(f"| {level} | {name} | {_show(ours)} | {_show(theirs)} | {verdict} |")
    summary = {}
    for level, lv in sorted(levels.items()):
        summary[level] = {"tasks": len(lv["ours"]), "ours_geomean": _geomean(lv["ours"]),
                          "theirs_geomean": _geomean(lv["theirs"]),
                          "ours_verified": len(lv["ours_v"]), "theirs_verified": len(lv["theirs_v"]),
                          "ours_verified_geomean": _geomean(lv["ours_v"]),
                          "theirs_verified_geomean": _geomean(lv["theirs_v"]),
                          **{k: lv["verdict"].count(k) for k in ("ahead", "behind", "tie")}}
    return lines, summary


def _geomean(xs: list[float]) -> float:
    return statistics.geometric_mean(xs) if xs else float("nan")


def _show(s: Side) -> str:
    if s.speedup is None:
        return s.status
    return f"{s.speedup:.2f}x" + ("" if s.verified else f" ({s.status}, not verified)")


def _side(res) -> Side:  # type: ignore[no-untyped-def]
    return Side(res.status, res.speedup, bool(res.verified))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["convert", "run", "report"])
    ap.add_argument("release", nargs="?", help="convert: the release JSON")
    ap.add_argument("--kernelbench", required=True, help="KernelBench tasks (level1..level3 folders)")
    ap.add_argument("--out", help="convert: the folder to write")
    ap.add_argument("--ours", default="kernelbench-v0", help="our solution set (installed name or folder)")
    ap.add_argument("--theirs", help="the other solution set (folder, e.g. made by convert)")
    ap.add_argument("--store", help="run/report: the results store both sets share")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--baseline", default="eager")
    ap.add_argument("--harness", default="{}", help="JSON of further EvalConfig fields (time budget, rounds ...)")
    ap.add_argument("--tasks", help="only these tasks (comma-separated names)")
    ap.add_argument("--level", type=int, action="append", help="only these levels")
    ap.add_argument("--sample", type=int, help="a random sample of this many common tasks (--seed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget-s", type=float, default=540.0, help="run: stop starting new tasks after this")
    ap.add_argument("--json", help="write the per-level figures here")
    a = ap.parse_args()
    kb = Path(a.kernelbench)
    if a.command == "convert":
        if not a.release or not a.out:
            ap.error("convert needs the release JSON and --out")
        seen = convert(json.loads(Path(a.release).read_text(encoding="utf-8")), kb, Path(a.out))
        print(json.dumps({k: len(v) for k, v in seen.items()}))
        for k in ("no_task", "ref_differs"):
            if seen[k]:
                print(f"{k}: {', '.join(seen[k][:20])}{' ...' if len(seen[k]) > 20 else ''}")
        return 0
    if not a.theirs or not a.store:
        ap.error(f"{a.command} needs --theirs and --store")

    from cudal1.harness import EvalConfig, EvalPool, ResultStore, load_suite
    from cudal1.harness.solutions import load_solutions

    tasks = [t for t in load_suite(f"kernelbench:{kb}") if not a.level or t.level in a.level]
    ours = {t.name: (t, c) for t, c in load_solutions(a.ours, tasks)[0]}
    theirs = {t.name: (t, c) for t, c in load_solutions(a.theirs, tasks)[0]}
    common = sorted(set(ours) & set(theirs))
    if a.tasks:
        wanted = set(a.tasks.split(","))
        common = [n for n in common if n in wanted]
    if a.sample and a.sample < len(common):
        common = sorted(random.Random(a.seed).sample(common, a.sample))
    print(f"{len(ours)} tasks have our file, {len(theirs)} theirs, {len(common)} both; comparing {len(common)}",
          flush=True)
    cfg = EvalConfig(device=a.device, baseline=a.baseline, **json.loads(a.harness))
    store = ResultStore(a.store)
    t0 = time.monotonic()
    if a.command == "run":
        pool = EvalPool(cfg)
        try:
            for name in common:  # one task at a time, both sets: the same reference worker, the same hour
                if time.monotonic() - t0 > a.budget_s:
                    print(f"budget spent after {time.monotonic() - t0:.0f} s", flush=True)
                    break
                for label, pair in (("ours", ours[name]), ("theirs", theirs[name])):
                    (res,) = pool.map([pair], store=store, run=label)
                    print(f"{time.monotonic() - t0:7.1f}s {label:6s} {name:55s} {res.status:13s} "
                          f"{res.speedup if res.speedup is not None else '-'} {','.join(sorted(res.flags))}",
                          flush=True)
        finally:
            pool.close()
    rows: dict[str, tuple[int, Side, Side]] = {}
    for name in common:
        (t, c_ours), (_, c_theirs) = ours[name], theirs[name]
        r_ours, r_theirs = store.lookup(t, c_ours, cfg), store.lookup(t, c_theirs, cfg)
        if r_ours is not None and r_theirs is not None:
            rows[name] = (t.level, _side(r_ours), _side(r_theirs))
    store.close()
    lines, summary = compare(rows)
    print(f"\n{len(rows)} of {len(common)} tasks measured for both sets ({a.device}, baseline {a.baseline})\n")
    print("\n".join(lines))
    print("\n| level | tasks | ours geomean (unverified = 1) | theirs | ours verified (geomean) | theirs verified "
          "(geomean) | ahead | behind | tie |\n|---|---|---|---|---|---|---|---|---|")
    for level, s in summary.items():
        print(f"| {level} | {s['tasks']} | {s['ours_geomean']:.3f}x | {s['theirs_geomean']:.3f}x | "
              f"{s['ours_verified']} ({s['ours_verified_geomean']:.3f}x) | {s['theirs_verified']} "
              f"({s['theirs_verified_geomean']:.3f}x) | {s['ahead']} | {s['behind']} | {s['tie']} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"device": a.device, "baseline": a.baseline, "levels": summary,
                                            "tasks": {n: {"level": lv, "ours": o._asdict(), "theirs": th._asdict()}
                                                      for n, (lv, o, th) in rows.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
