"""Carry a learning experiment's state from one device machine to the next (issue 42, item 4).

One seed of the GPU experiment needs about 24 minutes of GPU time (benchmarks/results/2026-12-06-attempt3-h100.md)
and a session lends 30, part of it spent starting the machine; the experiment's folder lives on the machine and
died with it, so no seed could span two sessions. ``pack`` writes what a later machine needs to continue the
experiment folder as parts small enough to come back from a device call; ``unpack`` restores them there.

    python3 benchmarks/scripts/learning_state.py pack runs/learning $OUT       # at the end of a device call
    python3 benchmarks/scripts/learning_state.py unpack .state/learning runs/learning   # before the next one

What is packed: every file of every run folder (metrics, completions, result stores, evaluations, state), except
the trainers' scratch folders (``trainer/``) and the checkpoints no phase still to run reads. A checkpoint (the
LoRA adapters, about 20 MB for the embedded policy) is needed while its own folder's final evaluation is missing,
or while a later phase still reads it: ``sft``'s until ``self_train``, ``sft_long`` and ``search`` exist and the
search is evaluated; ``self_train``'s until both GRPO arms have forked it. At most three at once (``sft``, ``grpo``,
``shuffled`` while GRPO runs). Parts are ``learning-state.tar.gz.part-NN`` of at most ``--part-mib`` MiB each;
``pack`` refuses (exit 2, nothing written) when more than ``--max-parts`` would be needed, since a device call brings
back at most 8 files of 16 MiB. The tar's gzip checksum makes ``unpack`` fail on a missing or damaged part.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import sys
import tarfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_experiment import EVALUATION, _eval_file  # noqa: E402 - its sibling script: the arms' folders

PREFIX = "learning-state.tar.gz.part-"

#: run folder -> the evaluation stage that ends it (``base`` is evaluated on the way, in ``sft``)
FINAL = {folder: stage for arm, (folder, stage) in EVALUATION.items() if arm != "base"}


def _evaluated(seed_dir: Path, arm: str) -> bool:
    return _eval_file(seed_dir / arm, FINAL[arm]).exists()


def checkpoint_needed(seed_dir: Path, arm: str) -> bool:
    """Whether a phase still to run reads run folder ``arm``'s checkpoint in ``seed_dir`` (one seed's arms)."""
    if not _evaluated(seed_dir, arm):
        return True
    forked = lambda child: (seed_dir / child).exists()  # noqa: E731 - a fork copies the checkpoint with the folder
    if arm == "sft":
        return not (forked("self_train") and forked("sft_long") and _evaluated(seed_dir, "search"))
    if arm == "self_train":
        return not (forked("grpo") and forked("shuffled"))
    return False


def members(out: Path) -> list[Path]:
    """The files of experiment folder ``out`` that ``pack`` takes, sorted."""
    keep = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        parts = path.relative_to(out).parts
        if "trainer" in parts:
            continue
        if "checkpoint" in parts:
            i = parts.index("checkpoint")
            seed_dir, arm = out.joinpath(*parts[:i - 1]), parts[i - 1]
            if arm in FINAL and not checkpoint_needed(seed_dir, arm):
                continue
        keep.append(path)
    return keep


def pack(out: Path, dest: Path, part_mib: float = 15.0, max_parts: int = 4) -> list[Path]:
    """Write ``out``'s state into ``dest`` as gzip'd tar parts; returns them. Raises ValueError (nothing written)
    when they would be more than ``max_parts``."""
    if not out.is_dir():
        raise ValueError(f"{out} is not an experiment folder")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in members(out):
            tar.add(path, arcname=str(path.relative_to(out)), recursive=False)
    data = buf.getvalue()
    size = max(1, int(part_mib * 2**20))
    chunks = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    if len(chunks) > max_parts:
        raise ValueError(f"the state of {out} is {len(data) / 2**20:.1f} MiB: {len(chunks)} parts of {part_mib} MiB, "
                         f"more than --max-parts {max_parts} (a device call brings back 8 files of 16 MiB); "
                         "finish or drop an arm whose checkpoint is kept")
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob(PREFIX + "*"):
        old.unlink()
    written = []
    for i, chunk in enumerate(chunks):
        p = dest / f"{PREFIX}{i:02d}"
        p.write_bytes(chunk)
        written.append(p)
    return written


def unpack(src: Path, out: Path) -> int:
    """Restore the parts in ``src`` into ``out`` (which must not exist: a machine's own folder is newer than
    anything carried to it); returns the files restored. Raises ValueError, with nothing restored, when there are no
    parts, a part is missing (a gap in the numbering, or the last one: the gzip stream then does not end) or one is
    damaged (gzip's checksum or length), and tarfile errors on a damaged archive inside a whole stream."""
    parts = sorted(src.glob(PREFIX + "*"))
    if not parts:
        raise ValueError(f"no {PREFIX}* files in {src}")
    if out.exists():
        raise ValueError(f"{out} exists: the machine's own experiment folder is kept (remove it to restore {src})")
    numbers = [p.name[len(PREFIX):] for p in parts]
    expected = [f"{i:02d}" for i in range(len(parts))]
    if numbers != expected:
        missing = sorted(set(expected) - set(numbers)) or numbers
        raise ValueError(f"the parts in {src} are {numbers}: {PREFIX}{missing[0]} is missing (carry every part)")
    try:
        # the whole stream first: tarfile stops reading at the archive's end marker, so a lost last part that held
        # only gzip's trailer went unnoticed (CI, 2026-12-07); gzip checks the trailer's checksum and length
        archive = gzip.decompress(b"".join(p.read_bytes() for p in parts))
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ValueError(f"the parts in {src} do not make a whole state ({e}): a part is missing or damaged "
                         "(carry every part of one pack)") from e
    tmp = out.with_name(out.name + ".unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            names = tar.getnames()
            tar.extractall(tmp, filter="data")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.rename(out)
    return len(names)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="experiment folder -> parts")
    p.add_argument("out", type=Path)
    p.add_argument("dest", type=Path)
    p.add_argument("--part-mib", type=float, default=15.0)
    p.add_argument("--max-parts", type=int, default=4)
    u = sub.add_parser("unpack", help="parts -> experiment folder")
    u.add_argument("src", type=Path)
    u.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "pack":
            parts = pack(a.out, a.dest, a.part_mib, a.max_parts)
            print(json.dumps({"parts": [p.name for p in parts], "bytes": sum(p.stat().st_size for p in parts)}))
        else:
            print(json.dumps({"restored_files": unpack(a.src, a.out), "into": str(a.out)}))
    except ValueError as e:
        print(f"learning_state: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
