"""The results store: one SQLite file (WAL mode) holding every EvalResult of a run, written as it is made.

A result is keyed by (task hash, candidate hash, config key): a pair evaluated with the same settings is
looked up instead of re-run, which is how an interrupted run resumes. The file is marked with an SQLite
``application_id``; a file that is not SQLite, or is another program's database, is refused with a
clear error and never written to.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .config import EvalConfig
from .types import Candidate, EvalResult, Task

APPLICATION_ID = 0x43554431  # "CUD1"
SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT NOT NULL,
    pair_key TEXT NOT NULL,
    task TEXT NOT NULL,
    task_hash TEXT NOT NULL,
    candidate_hash TEXT NOT NULL,
    config_key TEXT NOT NULL,
    status TEXT NOT NULL,
    speedup REAL,
    created_at TEXT NOT NULL,
    candidate_source TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_pair ON results(pair_key);
CREATE TABLE IF NOT EXISTS reference_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT NOT NULL,
    task TEXT NOT NULL,
    task_hash TEXT NOT NULL,
    config_key TEXT NOT NULL,
    device TEXT NOT NULL,
    ref_ms REAL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reference_task ON reference_runs(task_hash, config_key);
CREATE INDEX IF NOT EXISTS results_task ON results(task, status);
"""


class StoreError(RuntimeError):
    """The store file cannot be used (unreadable, not SQLite, another program's database, newer schema)."""


def pair_key(task: Task, candidate: Candidate, config: EvalConfig) -> str:
    return f"{task.hash[:24]}:{candidate.hash[:24]}:{config.key()[:16]}"


class ResultStore:
    """SQLite results store. Thread-safe for use by the pool's lanes.

    Args:
        path: the database file; created if missing. ``":memory:"`` for a throwaway store.
        read_only: open an existing store for reading only: nothing in the file changes (not even its
            journal mode), :meth:`add` raises. For reports made from a store of measured results.
    Raises:
        StoreError: the file exists but is not a cudal1 results store (it is left untouched), or
            ``read_only`` and there is no store at ``path``.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        if read_only and (self.path == ":memory:" or not Path(self.path).is_file()):
            raise StoreError(f"no results store at {self.path}: nothing to read (evaluate something first)")
        if self.path != ":memory:":
            self._check_existing(Path(self.path))
        try:
            if read_only:
                uri = "file:" + urllib.parse.quote(str(Path(self.path).resolve())) + "?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
            else:
                self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a usable SQLite database ({e}); choose another --store file") from e
        if tables and app_id != APPLICATION_ID:
            self._db.close()
            raise StoreError(
                f"{self.path} is an SQLite database of another program (application_id={app_id:#x}); "
                "refusing to write to it; choose another --store file"
            )
        self._lock = threading.Lock()
        if read_only:
            if not tables:
                self._db.close()
                raise StoreError(f"{self.path} holds no results store (an empty SQLite file)")
            self._schema_version()
            return
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            if not tables:
                self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self._db.executescript(_SCHEMA)
            if self._schema_version() is None:
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _schema_version(self) -> int | None:
        """The stored schema version (None in a new store); StoreError when newer than this code's."""
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema version {row[0]}, newer than this cudal1 ({SCHEMA_VERSION})")
        return None if row is None else int(row[0])

    @staticmethod
    def _check_existing(p: Path) -> None:
        if not p.exists():
            if not p.parent.exists():
                raise StoreError(f"folder {p.parent} does not exist; create it or choose another --store path")
            return
        if p.is_dir():
            raise StoreError(f"{p} is a folder, not a store file")
        try:
            with open(p, "rb") as f:
                head = f.read(16)
        except OSError as e:
            raise StoreError(f"cannot read store file {p}: {e.strerror}") from e
        if head and head != _SQLITE_MAGIC:
            raise StoreError(f"{p} is not an SQLite file; refusing to overwrite it; choose another --store file")

    def check_writable(self) -> None:
        """Raise :class:`StoreError` unless results can be written (checked before the first pair, so that
        nothing measured is lost to a read-only file or folder)."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only")
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('writable_check', ?)",
                                 (_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),))
                self._db.execute("COMMIT")
        except sqlite3.Error as e:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise StoreError(f"cannot write to the store {self.path} ({e}); check the permissions of the file and "
                             "its folder, or choose another --store") from e

    # -- writing ----------------------------------------------------------------------------------
    def add(self, result: EvalResult, task: Task, candidate: Candidate, config: EvalConfig, run: str = "") -> int:
        """Store one result at once (committed before returning). Returns its row id."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only; open it without read_only to add results")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO results (run, pair_key, task, task_hash, candidate_hash, config_key, status, speedup,"
                " created_at, candidate_source, record) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (run, pair_key(task, candidate, config), result.task, task.hash, candidate.hash, config.key(),
                 result.status, result.speedup, now, candidate.source, result.to_json()),
            )
            return int(cur.lastrowid or 0)

    def add_reference(self, task: Task, config: EvalConfig, record: dict[str, Any], run: str = "") -> int:
        """Store what the clean reference process measured of a task when it was set up (its time alone per
        call, calls per batch, stateful, task check, memory, environment): one row per set-up, keyed by task,
        device and config."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only; open it without read_only to add results")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        dev = str(record.get("environment", {}).get("gpu_name") or config.device.split(":")[0])
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO reference_runs (run, task, task_hash, config_key, device, ref_ms, created_at, record)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (run, task.name, task.hash, config.key(), dev, record.get("ref_ms"), now,
                 json.dumps(record, sort_keys=True, default=str)))
            return int(cur.lastrowid or 0)

    def references(self, task: str | None = None) -> list[dict[str, Any]]:
        """Stored reference set-ups (oldest first), optionally of one task: the record plus run, time, device."""
        q = "SELECT task, run, device, created_at, record FROM reference_runs"
        args: list[Any] = []
        if task is not None:
            q += " WHERE task=?"
            args.append(task)
        with self._lock:
            try:
                rows = self._db.execute(q + " ORDER BY id", args).fetchall()
            except sqlite3.OperationalError:  # a store written before the table existed, opened read-only
                return []
        return [{"task": t, "run": r, "device": d, "created_at": c, **json.loads(rec)} for t, r, d, c, rec in rows]

    # -- reading ----------------------------------------------------------------------------------
    def lookup(self, task: Task, candidate: Candidate, config: EvalConfig) -> EvalResult | None:
        """The latest stored result of this exact pair under this config, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM results WHERE pair_key=? ORDER BY id DESC LIMIT 1",
                (pair_key(task, candidate, config),),
            ).fetchone()
        return EvalResult.from_json(row[0]) if row else None

    def results(self, run: str | None = None, task: str | None = None) -> list[EvalResult]:
        """Stored results in insertion order, optionally for one run and/or task."""
        return [r for r, _ in self.rows(run=run, task=task)]

    def rows(self, run: str | None = None, task: str | None = None) -> Iterator[tuple[EvalResult, dict[str, Any]]]:
        """(result, row metadata incl. candidate_source, run, created_at) pairs."""
        q = "SELECT record, run, created_at, candidate_source, id FROM results WHERE 1=1"
        args: list[Any] = []
        if run is not None:
            q += " AND run=?"
            args.append(run)
        if task is not None:
            q += " AND task=?"
            args.append(task)
        with self._lock:
            rows = self._db.execute(q + " ORDER BY id", args).fetchall()
        for rec, r, created, src, rid in rows:
            yield EvalResult.from_json(rec), {"run": r, "created_at": created, "candidate_source": src, "id": rid}

    def export_json(self, path: str | Path, run: str | None = None) -> int:
        """Write stored results as a JSON array (one object per result, with run and time). Returns count."""
        items = []
        for res, meta in self.rows(run=run):
            d = res.to_dict()
            d.update(run=meta["run"], created_at=meta["created_at"])
            items.append(d)
        Path(path).write_text(json.dumps(items, indent=1, sort_keys=True))
        return len(items)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
