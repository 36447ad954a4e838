"""Write or check a solution set's ``measured.json`` (its measured figures, beside its files; see
``cudal1.kernelzoo.measured``) from the results stores its runs name: for every solution file of the set and every
run, the run's latest stored result whose code is the file's code (docstrings aside, as ``kb_release_table.py``
picks it), with its status, speedup over the run's baseline, 95% CI, both times (ms a call), flags, whether the
harness verifies it and whether it counts as an improvement.

    uv run python benchmarks/scripts/set_figures.py              # check kernelbench-v0's file against its stores
    uv run python benchmarks/scripts/set_figures.py --set kernelzoo   # the built-in tasks' released solutions
    uv run python benchmarks/scripts/set_figures.py --run h100-eager --baseline eager \
        --store benchmarks/results/2026-11-28-kernelbench-v0-sixteenth-pass-h100/results.sqlite.gz \
        --page benchmarks/results/2026-11-28-kernelbench-v0-sixteenth-pass-h100.md --write   # add or refresh a run

Without ``--write`` it prints what is out of date and exits 1 (0 when current, 2 on bad arguments); the file is
never changed then. A run's GPU is the one its store's records name (every record of the run must name the same).
``--set-dir`` reads the solution files from another folder (a copy of the set), for tests.
``tests/kernelzoo/test_measured_figures.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from kb_release_table import latest_records, measured_records  # noqa: E402
from kb_unsolved import ROOT, attempts_of, plain, write_or_check  # noqa: E402

from cudal1.harness.flags import improves  # noqa: E402
from cudal1.kernelzoo.measured import FORMAT, code_identity, measured_path  # noqa: E402
from cudal1.kernelzoo.solutions import available  # noqa: E402

ABOUT = ("Measured figures of the {set} solution files, per run (a GPU and a baseline): each file's latest stored "
         "result for its code in the run's store. Written and checked by benchmarks/scripts/set_figures.py; read "
         "with cudal1.kernelzoo.measured.")


def _rel(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def figures_of_run(run: dict, files: dict[str, Path], store: Path) -> tuple[str, dict[str, dict]]:
    """The run's GPU and, per file with a record of its code in the run's store (``store``: its plain sqlite), its
    figure entry."""
    records = latest_records(store, run["baseline"])
    rows, _ = measured_records(records, files)
    gpus = {(r.get("environment") or {}).get("gpu_name") or r.get("device", "?") for _, r in rows}
    if len(gpus) > 1:
        raise ValueError(f"{run['store']}: the {run['baseline']} records name several devices {sorted(gpus)}: "
                         "one run is one GPU (split the store)")
    out = {}
    for name, r in rows:
        (entry,) = attempts_of([r])
        ci = r.get("speedup_ci")
        entry["improves"] = improves(r["status"], r.get("flags", []), tuple(ci) if ci else None)
        out[name] = entry
    return (gpus.pop() if gpus else run.get("gpu", "?")), out


def build(doc: dict, files: dict[str, Path], solution_set: str) -> dict:
    """``doc`` (its runs) with every run's figures and every file's code identity made afresh from the stores."""
    runs = {rid: dict(r) for rid, r in doc.get("runs", {}).items()}
    tasks: dict[str, dict] = {name: {"code": code_identity(p.read_text(encoding="utf-8"))}
                              for name, p in sorted(files.items())}
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, Path] = {}  # runs of one store (several baselines) decompress it once
        for rid, run in runs.items():
            if run["store"] not in stores:
                sub = Path(tmp) / str(len(stores))
                sub.mkdir()
                stores[run["store"]] = plain(ROOT / run["store"], sub)
            run["gpu"], figs = figures_of_run(run, files, stores[run["store"]])
            for name, entry in figs.items():
                tasks[name][rid] = entry
    return {"format": FORMAT, "about": ABOUT.format(set=solution_set), "runs": runs, "tasks": tasks}


def render(doc: dict) -> str:
    """The file's text: the header and runs indented, one line per task (a diff shows which task changed)."""
    head = json.dumps({k: v for k, v in doc.items() if k != "tasks"}, indent=1)[:-2]
    tasks = ",\n".join(f"  {json.dumps(t)}: {json.dumps(e)}" for t, e in doc["tasks"].items())
    return f"{head},\n \"tasks\": {{\n{tasks}\n }}\n}}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="kernelbench-v0", dest="solution_set", help="the solution set (kernelbench-v0)")
    ap.add_argument("--out", type=Path, help="the measured.json (default: the set's)")
    ap.add_argument("--set-dir", type=Path, help="read the solution files from this folder (default: the set's)")
    ap.add_argument("--run", help="add or refresh this run id (with --store, --baseline and --page)")
    ap.add_argument("--store", type=Path, help="the run's results.sqlite(.gz)")
    ap.add_argument("--baseline", help="the run's baseline (eager, compile, ...)")
    ap.add_argument("--page", type=Path, help="the result page of the run")
    ap.add_argument("--write", action="store_true", help="write the file (else only check it)")
    a = ap.parse_args(argv)
    try:
        a.out = a.out or measured_path(a.solution_set)
    except KeyError as err:
        print(f"set_figures: {err.args[0]}", file=sys.stderr)
        return 2
    doc = json.loads(a.out.read_text(encoding="utf-8")) if a.out.exists() else {"runs": {}}
    if a.run:
        if not (a.store and a.baseline and a.page):
            print("set_figures: --run needs --store, --baseline and --page", file=sys.stderr)
            return 2
        for p in (a.store, a.page):
            if not p.exists():
                print(f"set_figures: {p} does not exist", file=sys.stderr)
                return 2
        doc.setdefault("runs", {})[a.run] = {"gpu": "?", "baseline": a.baseline, "store": _rel(a.store),
                                             "page": _rel(a.page)}
    if not doc.get("runs"):
        print(f"set_figures: {a.out} names no run: add one with --run", file=sys.stderr)
        return 2
    files = {p.stem: p for p in sorted(a.set_dir.glob("*.py"))} if a.set_dir else available(a.solution_set)
    try:
        new = build(doc, files, a.solution_set)
    except (ValueError, FileNotFoundError) as err:
        print(f"set_figures: {err}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{rid} {sum(rid in e for e in new['tasks'].values())}" for rid in new["runs"])
    old = json.loads(a.out.read_text(encoding="utf-8")) if a.out.exists() else {"tasks": {}}
    stale = sorted(t for t in set(new["tasks"]) | set(old.get("tasks", {}))
                   if new["tasks"].get(t) != old.get("tasks", {}).get(t))
    return write_or_check(a.out, render(new), a.write, f"{len(new['tasks'])} files; figures per run: {counts}",
                          f"; differs for: {', '.join(stale) or 'its runs or header'}")


if __name__ == "__main__":
    raise SystemExit(main())
