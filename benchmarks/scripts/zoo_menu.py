"""Write the kernel zoo's op menu (packages/kernelzoo/src/cudal1/kernelzoo/menu.json) from the zoo's signatures and
a committed results store of its released solutions: for each op, the built-in tasks whose measured solution
imports it, with the speedup over the baseline and its 95% interval (issue 42, the zoo action space).

    uv run python benchmarks/scripts/zoo_menu.py            # write menu.json
    uv run python benchmarks/scripts/zoo_menu.py --check    # exit 1 when menu.json is not what it would write

The store is the zoo report of 2026-11-23 on an H100 (eager baseline; its page names the GPU, driver and versions).
Nothing is measured here.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "benchmarks" / "results" / "2026-11-23-zoo-report-h100"
PAGE = "benchmarks/results/2026-11-23-zoo-report-h100.md"


def measured_by_op(store: Path, baseline: str, names: list[str]) -> dict[str, list[dict]]:
    """Op -> [{"task", "speedup", "ci"}] over the store's ok rows of ``baseline`` (one per task: the last)."""
    from cudal1.prompts.menu import names_imported_from

    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = con.execute("select task, status, speedup, candidate_source, record from results order by id").fetchall()
    con.close()
    per_task: dict[str, tuple[float, list[float], str]] = {}
    for task, status, speedup, src, record in rows:
        rec = json.loads(record)
        if rec.get("baseline") != baseline or status != "ok" or speedup is None:
            continue
        ci = [round(float(v), 3) for v in (rec.get("ci") or [speedup, speedup])]
        per_task[task] = (round(float(speedup), 3), ci, src)
    out: dict[str, list[dict]] = {}
    for task, (speedup, ci, src) in sorted(per_task.items()):
        for op in sorted(names_imported_from(src, "cudal1.kernelzoo") & set(names)):
            out.setdefault(op, []).append({"task": task, "speedup": speedup, "ci": ci})
    return out


def render() -> str:
    from cudal1.kernelzoo.menu import build_menu, menu_op_names

    device = json.loads((REPORT / "report.json").read_text())
    env = device["environment"]
    source = {"page": PAGE, "gpu": env["gpu_name"], "date": device["created"][:10], "baseline": "eager"}
    doc = build_menu(measured_by_op(REPORT / "results.sqlite", "eager", menu_op_names()), source)
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed menu.json instead of writing")
    a = ap.parse_args()
    from cudal1.kernelzoo.menu import MENU_FILE

    text = render()
    if a.check:
        same = MENU_FILE.is_file() and MENU_FILE.read_text() == text
        print("menu.json is current" if same else f"{MENU_FILE} is stale: run {Path(__file__).name} to rewrite it")
        return 0 if same else 1
    MENU_FILE.write_text(text)
    ops = json.loads(text)["ops"]
    print(f"wrote {MENU_FILE}: {len(ops)} ops, {sum(bool(o['measured']) for o in ops)} with measurements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
