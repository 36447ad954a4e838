"""How the parent's import check (cudal1.harness.library_imports) agrees with what workers answered: every pair of
the result stores given (files, folders searched for *.sqlite, or a learning run's .tar.gz), by whether the check
answers it and the verdict the worker gave. Also the wall time the workers spent per status.

    uv run python benchmarks/scripts/import_check_agreement.py benchmarks/results/2026-12-06-learning-seed0-h100/call4-learning.tar.gz

A pair counts once however many stores hold it (forked run folders copy their parent's store).
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import statistics
import sys
import tarfile
import tempfile
from pathlib import Path

from cudal1.harness.library_imports import library_import_problem


def stores(paths: list[str], tmp: Path) -> list[Path]:
    found: list[Path] = []
    for p in map(Path, paths):
        if p.suffixes[-2:] == [".tar", ".gz"]:
            with tarfile.open(p) as tar:
                tar.extractall(tmp / p.name, filter="data")
            p = tmp / p.name
        found += sorted(p.rglob("*.sqlite")) if p.is_dir() else [p]
    return [f for f in found if f.name != "hacks.sqlite"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pairs: dict[tuple[str, str], tuple[str, dict]] = {}
        for f in stores(a.paths, Path(tmp)):
            db = sqlite3.connect(f"file:{f.resolve()}?mode=ro", uri=True)
            try:
                rows = db.execute("SELECT pair_key, created_at, candidate_source, record FROM results").fetchall()
            except sqlite3.DatabaseError:
                continue
            finally:
                db.close()
            for key, created, source, rec in rows:
                pairs.setdefault((key, created), (source, json.loads(rec)))
    table: collections.Counter[tuple[bool, str, bool]] = collections.Counter()
    walls: dict[str, list[float]] = collections.defaultdict(list)
    for source, rec in pairs.values():
        why = rec.get("reason", "")
        import_error = rec["status"] == "compile_error" and ("ImportError" in why or "ModuleNotFoundError" in why)
        table[(bool(library_import_problem(source)), rec["status"], import_error)] += 1
        walls[rec["status"]].append(rec.get("wall_s") or 0.0)
    print(f"{len(pairs)} pairs\n")
    print("| answered in the parent | the worker's status | an ImportError | pairs |\n|---|---|---|---|")
    for (flag, status, imp), n in sorted(table.items(), key=lambda kv: (not kv[0][0], kv[0][1], kv[0][2])):
        print(f"| {'yes' if flag else 'no'} | {status} | {'yes' if imp else 'no'} | {n} |")
    print("\n| status | pairs | median wall (s) | sum (s) |\n|---|---|---|---|")
    for status, w in sorted(walls.items()):
        print(f"| {status} | {len(w)} | {statistics.median(w):.2f} | {sum(w):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
