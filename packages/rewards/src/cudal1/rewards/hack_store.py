"""The hack-case store: one SQLite file (WAL mode) of confirmed and suspected reward hacks.

Each case keeps the code, its normalised-AST fingerprint (see :mod:`cudal1.rewards.fingerprint`), the
flags, the verdict (``confirmed``, ``suspected``, or ``cleared`` when a judge found a suspect honest),
who decided and a note. :meth:`HackStore.similar` finds the stored cases nearest to new code (Jaccard
similarity of AST node-type 3-grams), which the reward checker shows its judge. The file is marked with
its own SQLite ``application_id``; any other file is refused and left untouched.

Example:
    >>> from cudal1.rewards.hack_store import HackStore
    >>> store = HackStore(":memory:")
    >>> cid = store.add("import torch\\ns = torch.cuda.Stream()", "confirmed", flags=("side_stream",),
    ...                 decided_by="person:alice", note="work hidden on a side stream")
    >>> store.similar("import torch\\nt = torch.cuda.Stream()", k=1)[0].case.id == cid
    True
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .fingerprint import fingerprint, jaccard, ngrams

__all__ = ["APPLICATION_ID", "VERDICTS", "HackCase", "HackStore", "HackStoreError", "Match"]

APPLICATION_ID = 0x43554448  # "CUDH"
SCHEMA_VERSION = 1
VERDICTS: tuple[str, ...] = ("confirmed", "suspected", "cleared")
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL,
    verdict TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    flags TEXT NOT NULL,
    note TEXT NOT NULL,
    task TEXT NOT NULL,
    created_at TEXT NOT NULL,
    code TEXT NOT NULL,
    ngrams TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cases_fp ON cases(fingerprint);
"""


class HackStoreError(RuntimeError):
    """The file cannot be used as a hack-case store (not SQLite, another program's database, newer schema)."""


@dataclass(frozen=True)
class HackCase:
    """One stored decision about a piece of candidate code."""

    id: int
    code: str
    fingerprint: str
    verdict: str
    flags: tuple[str, ...]
    decided_by: str
    note: str
    task: str
    created_at: str


@dataclass(frozen=True)
class Match:
    """A stored case and its similarity (0..1, Jaccard of AST 3-grams) to the queried code."""

    case: HackCase
    similarity: float


class HackStore:
    """SQLite hack-case store, safe to share between threads.

    Args:
        path: the database file, created if missing; ``":memory:"`` for a throwaway store.
    Raises:
        HackStoreError: the file exists but is not a cudal1 hack-case store (it is left untouched).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            self._check_existing(Path(self.path))
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as e:
            raise HackStoreError(f"{self.path} is not a usable SQLite database ({e}); choose another file") from e
        if tables and app_id != APPLICATION_ID:
            self._db.close()
            raise HackStoreError(f"{self.path} is an SQLite database of another program (application_id="
                                 f"{app_id:#x}); refusing to write to it; choose another hack-store file")
        self._lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            if not tables:
                self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                self._db.close()
                raise HackStoreError(f"{self.path} has schema version {row[0]}, newer than this cudal1 "
                                     f"({SCHEMA_VERSION}); upgrade cudal1-rewards")

    @staticmethod
    def _check_existing(p: Path) -> None:
        if not p.exists():
            if not p.parent.exists():
                raise HackStoreError(f"folder {p.parent} does not exist; create it or choose another path")
            return
        if p.is_dir():
            raise HackStoreError(f"{p} is a folder, not a hack-store file")
        with open(p, "rb") as f:
            head = f.read(16)
        if head and head != _SQLITE_MAGIC:
            raise HackStoreError(f"{p} is not an SQLite file; refusing to overwrite it; choose another file")

    def close(self) -> None:
        """Close the database (the object is unusable afterwards)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> HackStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, code: str, verdict: str, flags: Iterable[str] = (), decided_by: str = "rules",
            note: str = "", task: str = "") -> int:
        """Store one decision about ``code``; returns the new case id.

        Args:
            code: the candidate's source.
            verdict: ``confirmed``, ``suspected`` or ``cleared``.
            flags: the result's flags (integrity findings) that led to the decision.
            decided_by: who decided: ``rules``, ``judge:<model>``, ``person:<name>`` ...
            note: why, in a sentence.
            task: the task name, when known.
        """
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
        if not decided_by:
            raise ValueError("decided_by must say who decided (e.g. 'rules', 'judge:model', 'person:name')")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        row = (fingerprint(code), verdict, decided_by, json.dumps(list(flags)), note, task, now, code,
               json.dumps(sorted(ngrams(code))))
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO cases (fingerprint, verdict, decided_by, flags, note, task, created_at, code, ngrams)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            return int(cur.lastrowid)

    _COLS = "id, code, fingerprint, verdict, flags, decided_by, note, task, created_at"

    @staticmethod
    def _case(r: tuple) -> HackCase:
        return HackCase(id=r[0], code=r[1], fingerprint=r[2], verdict=r[3], flags=tuple(json.loads(r[4])),
                        decided_by=r[5], note=r[6], task=r[7], created_at=r[8])

    def get(self, case_id: int) -> HackCase:
        """The case with this id; raises KeyError if there is none."""
        with self._lock:
            r = self._db.execute(f"SELECT {self._COLS} FROM cases WHERE id=?", (case_id,)).fetchone()
        if r is None:
            raise KeyError(f"no hack case with id {case_id} in {self.path}")
        return self._case(r)

    def list(self, verdict: str | None = None) -> list[HackCase]:
        """All cases (oldest first), or those with ``verdict``."""
        q, args = f"SELECT {self._COLS} FROM cases", ()
        if verdict is not None:
            q, args = q + " WHERE verdict=?", (verdict,)
        with self._lock:
            rows = self._db.execute(q + " ORDER BY id", args).fetchall()
        return [self._case(r) for r in rows]

    def by_fingerprint(self, code: str) -> list[HackCase]:
        """Cases whose code has the same normalised-AST fingerprint as ``code`` (oldest first)."""
        with self._lock:
            rows = self._db.execute(f"SELECT {self._COLS} FROM cases WHERE fingerprint=? ORDER BY id",
                                    (fingerprint(code),)).fetchall()
        return [self._case(r) for r in rows]

    def similar(self, code: str, k: int = 3, verdicts: Iterable[str] = ("confirmed", "suspected")) -> list[Match]:
        """The ``k`` stored cases nearest to ``code``, most similar first (ties: newest first).

        Only cases with a verdict in ``verdicts`` are considered (by default the hacks, not the cleared).
        """
        verdicts = tuple(verdicts)
        query = ngrams(code)
        marks = ",".join("?" * len(verdicts))
        with self._lock:
            rows = self._db.execute(f"SELECT {self._COLS}, ngrams FROM cases WHERE verdict IN ({marks})",
                                    verdicts).fetchall() if verdicts else []
        scored = [Match(self._case(r[:-1]), jaccard(query, frozenset(json.loads(r[-1])))) for r in rows]
        scored.sort(key=lambda m: (-m.similarity, -m.case.id))
        return scored[:max(k, 0)]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM cases").fetchone()[0])
