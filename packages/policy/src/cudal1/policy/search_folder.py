"""The output folder of a contrastive search (cudal1.policy.search) and how it is kept consistent on disk.

    results.sqlite    every result (cudal1.harness.ResultStore), rows of round N under the run ``search:roundN``
    best/<task>.py    the fastest real improvement's ModelNew source (EvalResult.improves: verified, not a copy of
                      the reference, 95% speedup interval above 1), rewritten when it changes
    best.json         per task: speedup, CI, status, flags, candidate hash, round found, baseline, device,
                      reference and candidate times (ms), task hash, file; null while nothing improves
    history.jsonl     one line per completion: round, task, completion index, candidate hash, parents, status,
                      speedup, flags, reason, verified (status ``no_code`` / ``duplicate`` when not evaluated)
    state.json        rounds_done, identity (tasks -> hash, baseline, device, backend), config, eval_config

Every file is replaced atomically (write, fsync, rename) and state.json is written last in a round, so a
crash leaves the folder at the end of the last completed round plus results in the store; history lines of
a round that did not complete are dropped when the search resumes (the round is redone).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cudal1.harness import EvalResult, ResultStore, Task

__all__ = ["SearchFolder", "SearchStateError", "round_of", "run_label"]

_RUN = re.compile(r"^search:round(\d+)$")


def run_label(round_: int) -> str:
    """The store's run label of a search round (``search:round3``)."""
    return f"search:round{round_}"


def round_of(run: str) -> int | None:
    """The round a store run label belongs to, None for rows not written by a search round."""
    m = _RUN.match(run or "")
    return int(m.group(1)) if m else None


class SearchStateError(ValueError):
    """The output folder holds another search (other tasks, baseline, device or backend), or an unreadable
    state.json. The message says what differs and what to do."""


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` at once (a reader sees the old file or the new one, never half)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class SearchFolder:
    """The files of one search folder (created if missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.mkdir(parents=True, exist_ok=True)

    @property
    def store_path(self) -> Path:
        return self.path / "results.sqlite"

    @property
    def best_dir(self) -> Path:
        return self.path / "best"

    def read_state(self) -> dict[str, Any]:
        """state.json ({} when there is none). SearchStateError when it cannot be read."""
        p = self.path / "state.json"
        if not p.exists():
            return {}
        try:
            state = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(state, dict):
                raise ValueError("not a JSON object")
            return state
        except (OSError, ValueError) as e:
            raise SearchStateError(f"{p} cannot be read ({e}); use a new output folder, or remove state.json "
                                   "(the results in results.sqlite are kept and reused)") from e

    def save_state(self, **state: Any) -> None:
        state["updated_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        write_atomic(self.path / "state.json", json.dumps(state, indent=1, sort_keys=True))

    def read_best(self) -> dict[str, Any]:
        """best.json ({} when missing or unreadable: it is rebuilt from the store)."""
        p = self.path / "best.json"
        try:
            data = json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
        except (OSError, ValueError):
            data = {}
        return data if isinstance(data, dict) else {}

    def trim_history(self, rounds_done: int) -> None:
        """Drop history lines of rounds after ``rounds_done`` (an interrupted round is redone)."""
        p = self.path / "history.jsonl"
        if not p.exists():
            return
        keep = []
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                if int(json.loads(line)["round"]) <= rounds_done:
                    keep.append(line)
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line
        write_atomic(p, "".join(k + "\n" for k in keep))

    def append_history(self, records: Sequence[dict[str, Any]]) -> None:
        with open(self.path / "history.jsonl", "a", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def update_best(self, store: ResultStore, tasks: Sequence[Task], *, device: str, baseline: str,
                    best: dict[str, Any], log: Callable[[str], Any]) -> dict[str, Any]:
        """Recompute each task's best from the store: the highest speedup among real improvements
        (:attr:`EvalResult.improves`: verified, not ``same_as_reference``, interval above 1; a copy of the reference
        timed faster by noise is no best) for the task's hash, ``device`` and ``baseline``, any round (the newest measurement of a source counts; ties
        go to the earlier one). Rewrites best/<task>.py and best.json where it changed; entries of tasks not
        in ``tasks`` are kept as they are. Returns the new best.json content."""
        self.best_dir.mkdir(exist_ok=True)
        out = dict(best)
        for task in tasks:
            newest: dict[str, tuple[EvalResult, dict[str, Any]]] = {}
            for res, meta in store.rows(task=task.name):
                if res.task_hash == task.hash and res.device == device and res.baseline == baseline:
                    newest[res.candidate_hash] = (res, meta)
            ranked = [(res, meta) for res, meta in newest.values() if res.improves and res.speedup is not None]
            old = out.get(task.name)
            path = self.best_dir / f"{task.name}.py"
            if not ranked:
                if old is not None:  # measured for another task version, device or baseline (a forced resume)
                    path.unlink(missing_ok=True)
                    log(f"{path} removed: it was measured for another task version, device or baseline than this "
                        "search's (its source stays in results.sqlite)")
                out[task.name] = None
                continue
            res, meta = max(ranked, key=lambda rm: (rm[0].speedup, -rm[1]["id"]))
            if (isinstance(old, dict) and old.get("candidate_hash") == res.candidate_hash
                    and old.get("task_hash") == task.hash and path.is_file()):
                continue
            write_atomic(path, meta["candidate_source"])
            out[task.name] = {
                "speedup": res.speedup, "speedup_ci": list(res.speedup_ci) if res.speedup_ci else None,
                "status": res.status, "flags": list(res.flags), "candidate_hash": res.candidate_hash,
                "round": round_of(meta.get("run", "")), "baseline": res.baseline, "device": res.device,
                "ref_ms": res.ref_ms, "cand_ms": res.cand_ms, "task_hash": task.hash,
                "file": str(Path("best") / path.name),
            }
        write_atomic(self.path / "best.json", json.dumps(out, indent=1, sort_keys=True))
        return out
