"""Append every record of one harness result store (``results.sqlite``) to another: the results and the reference
runs that the destination does not hold yet (same pair key / task and config, same creation time), ids renumbered,
nothing changed or removed. For a device call that measured into a store of its own (``gpu_kb_release.sh`` with
``STORE=...``) while another call filled the main one.

    python benchmarks/scripts/kb_store_append.py SRC/results.sqlite DST/results.sqlite

Prints how many rows of each table it appended.
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

#: per table: the columns copied (all but the id) and the ones that identify a record
TABLES = {
    "results": (("run", "pair_key", "task", "task_hash", "candidate_hash", "config_key", "status", "speedup",
                 "created_at", "candidate_source", "record"), ("pair_key", "created_at")),
    "reference_runs": (("run", "task", "task_hash", "config_key", "device", "ref_ms", "created_at", "record"),
                       ("task_hash", "config_key", "created_at")),
}


def append(src: Path, dst: Path) -> dict[str, int]:
    """Copy the records of ``src`` missing from ``dst`` into ``dst``; returns the number appended per table."""
    for p in (src, dst):
        if not p.is_file():
            raise SystemExit(f"{p}: no such store")
    db = sqlite3.connect(dst)
    try:
        db.execute("ATTACH DATABASE ? AS src", (str(src),))
        versions = [db.execute(f"SELECT value FROM {s}.meta WHERE key = 'schema_version'").fetchone()
                    for s in ("main", "src")]
        if versions[0] != versions[1]:
            raise SystemExit(f"schema versions differ: {dst} {versions[0]}, {src} {versions[1]}")
        counts = {}
        with db:
            for table, (cols, ident) in TABLES.items():
                names = ", ".join(cols)
                match = " AND ".join(f"d.{c} = s.{c}" for c in ident)
                cur = db.execute(f"INSERT INTO main.{table} ({names}) SELECT {names} FROM src.{table} s "
                                 f"WHERE NOT EXISTS (SELECT 1 FROM main.{table} d WHERE {match}) ORDER BY s.id")
                counts[table] = cur.rowcount
        return counts
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    opts = ap.parse_args()
    for table, n in append(opts.src, opts.dst).items():
        print(f"{table}: {n} appended")


if __name__ == "__main__":
    main()
