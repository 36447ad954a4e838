"""Write the measured fields of ``kernelbench_v0/unsolved.json`` (why the set has no file for a task; see
``cudal1.kernelzoo.unsolved``) from the release's results store: for every task the set does not solve, the
reference's time a call through the harness on the release's GPU (the median over the store's eager results for
the task, else the 2026-11-24 self-run's), the roofline fraction of that time (the task's FLOPs and ideal bytes from
the evaluate app's ``work.json``, the GPU's measured peaks), and every attempt the store holds (eager baseline,
oldest first). The reason code and the sentence of why are written by hand in the file and kept; a task without
them is an error, as is an entry for a task that now has a solution file (``unsolved.unaccounted``).

    python benchmarks/scripts/kb_unsolved.py --store results.sqlite.gz --selfrun kb-before.sqlite \
        --work work.json --peaks device.json --kernelbench ../shared/kernelbench-v0 [--write]

Without ``--write`` it prints what it would change and exits 1 if the file is out of date (0 if current). The file
names the inputs it was written from (``sources``, paths from the repository root; a ``.gz`` store is read
decompressed); an argument left out is taken from there, so ``kb_unsolved.py --kernelbench KB`` checks the
committed file against the committed stores (``tests/kernelzoo/test_kernelbench_unsolved.py`` does).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from cudal1.harness.flags import verified
from cudal1.harness.roofline import DevicePeaks, TaskWork, roofline_ms
from cudal1.kernelzoo.solutions import available
from cudal1.kernelzoo.unsolved import load, unaccounted, unsolved_path

sys.path.insert(0, str(Path(__file__).parent))
from kb_release_table import latest_records  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: the inputs the file names in ``sources`` (each also an argument)
SOURCES = ("store", "selfrun", "work", "peaks")


def attempts_of(records: list[dict]) -> list[dict]:
    """A task's eager-baseline records of the store (``latest_records``), oldest first, as the JSON entries of
    ``attempts``."""
    out = []
    for r in records:
        ci = r.get("speedup_ci")
        out.append({"measured": r["_created"][:16], "status": r["status"], "speedup": r.get("speedup"),
                    "ci": [round(ci[0], 3), round(ci[1], 3)] if ci else None,
                    "reference_ms": round(r["ref_ms"], 4) if r.get("ref_ms") else None,
                    "ours_ms": round(r["cand_ms"], 4) if r.get("cand_ms") else None,
                    "flags": sorted(r.get("flags", [])), "verified": verified(r["status"], r.get("flags", []))})
    return out


def reference_time(attempts: list[dict], selfrun: list[dict]) -> tuple[float | None, str]:
    """The reference's ms a call and where it comes from: the median of the attempts' reference times, else the
    self-run's (the reference measured against itself; ``selfrun``: its records of the task), else None."""
    refs = [a["reference_ms"] for a in attempts if a["reference_ms"]]
    if refs:
        return round(statistics.median(refs), 4), f"median of the {len(refs)} reference times of the attempts"
    if selfrun:
        ms = selfrun[-1].get("ref_ms")
        if ms:
            return round(ms, 4), "the 2026-11-24 self-run (H100, harness before the trust boundary)"
        return None, f"not timed: the 2026-11-24 self-run's reference ended {selfrun[-1]['status']}"
    return None, "not timed"


def plain(path: Path, tmp: Path) -> Path:
    """``path``, or for a ``.gz`` store its decompressed copy in ``tmp``."""
    if path.suffix != ".gz":
        return path
    out = tmp / path.stem
    with gzip.open(path, "rb") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, help="the release's results.sqlite (or .sqlite.gz)")
    ap.add_argument("--selfrun", type=Path, help="the 2026-11-24 self-run's kb-before.sqlite")
    ap.add_argument("--work", type=Path, help="the evaluate app's work.json of the release report")
    ap.add_argument("--peaks", type=Path, help="device.json with the release GPU's measured peaks")
    ap.add_argument("--kernelbench", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=unsolved_path("kernelbench-v0"))
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args(argv)
    doc = json.loads(a.out.read_text(encoding="utf-8"))
    sources = dict(doc.get("sources", {}))
    for key in SOURCES:
        given = getattr(a, key)
        if given is not None:
            given = given.resolve()
            sources[key] = str(given.relative_to(ROOT)) if given.is_relative_to(ROOT) else str(given)
        if key not in sources:
            print(f"kb_unsolved: give --{key} (the file names no {key} among its sources)", file=sys.stderr)
            return 2
    tasks = {p.stem for lv in (1, 2, 3) for p in (a.kernelbench / f"level{lv}").glob("*.py")}
    if len(tasks) != 250:
        print(f"kb_unsolved: {a.kernelbench} holds {len(tasks)} task files, not KernelBench's 250 (give its "
              f"checkout)", file=sys.stderr)
        return 2
    solved = set(available("kernelbench-v0"))
    problems = unaccounted(tasks, solved, load(a.out))
    if problems:
        print("kb_unsolved: " + "\n  ".join(problems), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        store = latest_records(plain(ROOT / sources["store"], Path(tmp)), "eager")
        selfrun = latest_records(plain(ROOT / sources["selfrun"], Path(tmp)), "eager")
    work = json.loads((ROOT / sources["work"]).read_text(encoding="utf-8"))
    peaks = DevicePeaks.from_dict(json.loads((ROOT / sources["peaks"]).read_text(encoding="utf-8")))
    entries = {}
    for t in sorted(tasks - solved, key=lambda t: (int(t.split("_")[0]), t)):
        att = attempts_of(store.get(t, []))
        ref, src = reference_time(att, selfrun.get(t, []))
        rl = roofline_ms(TaskWork(**work[t]["work"]), peaks) if t in work else None
        hand = doc["tasks"][t]
        entries[t] = {"reason": hand["reason"], "why": hand["why"], "reference_ms": ref, "reference_from": src,
                      "reference_roofline": round(rl / ref, 4) if rl and ref else None, "attempts": att}
    measured_peaks = {"copy_bytes_per_s": round(peaks.copy_bytes_per_s),
                      "fp32_flop_per_s": round(peaks.fp32_flop_per_s)}
    new = dict(doc, sources=sources, gpu=peaks.name, peaks=measured_peaks, tasks=entries)
    return write_or_check(a.out, json.dumps(new, indent=1) + "\n", a.write, f"{len(entries)} tasks")


def write_or_check(out: Path, text: str, write: bool, summary: str, differs: str = "") -> int:
    """Exit status of a data file made from the stores: 0 when ``out`` holds ``text`` already or ``write`` wrote it,
    else 1 (``out`` left as it was; ``differs`` says where it differs)."""
    if out.exists() and text == out.read_text(encoding="utf-8"):
        print(f"{out}: current ({summary})")
        return 0
    if write:
        out.write_text(text, encoding="utf-8")
        print(f"{out}: written ({summary})")
        return 0
    print(f"{out}: out of date (rerun with --write){differs}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
