"""A learning experiment's state travels between device machines (benchmarks/scripts/learning_state.py): what is
packed is exactly what a later phase reads (no trainer scratch, no checkpoint every later phase has copied or no
longer reads), it comes back byte for byte, and a missing part, an oversized state or a folder already on the
machine is refused, never half-restored."""

from __future__ import annotations

import importlib.util
import os
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("learning_state", ROOT / "benchmarks/scripts/learning_state.py")
ls = importlib.util.module_from_spec(spec)
sys.modules["learning_state"] = ls
spec.loader.exec_module(ls)


def _arm(seed: Path, arm: str, *, evaluated: bool, ckpt_bytes: int = 4096) -> None:
    d = seed / arm
    (d / "checkpoint").mkdir(parents=True)
    (d / "checkpoint" / "adapter_model.safetensors").write_bytes(os.urandom(ckpt_bytes))
    (d / "trainer" / "sft").mkdir(parents=True)
    (d / "trainer" / "sft" / "optimizer.pt").write_bytes(os.urandom(ckpt_bytes))
    (d / "metrics.jsonl").write_text('{"event": "start"}\n')
    (d / "evaluation").mkdir()
    if evaluated:
        (d / "evaluation" / f"{ls.FINAL[arm]}.json").write_text("{}")


def _experiment(root: Path) -> Path:
    """Mid-GRPO: sft and self_train evaluated, both GRPO arms forked and running, sft_long and search not begun."""
    seed = root / "learning" / "seed0"
    _arm(seed, "sft", evaluated=True)
    _arm(seed, "self_train", evaluated=True)
    _arm(seed, "grpo", evaluated=False)
    _arm(seed, "shuffled", evaluated=False)
    (root / "learning" / "results.md").write_text("tables\n")
    return root / "learning"


def _names(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in ls.members(out)}


def test_only_checkpoints_a_later_phase_reads_are_packed_and_they_come_back_byte_for_byte(tmp_path):
    out = _experiment(tmp_path)
    names = _names(out)
    ckpts = {n.split("/")[1] for n in names if "/checkpoint/" in n}
    # sft's is read by sft_long and the search, still to come; the running arms' by their next rounds; self_train's
    # was copied into both GRPO arms when they forked
    assert ckpts == {"sft", "grpo", "shuffled"}
    assert not any("/trainer/" in n for n in names) and "results.md" in names
    parts = ls.pack(out, tmp_path / "back", part_mib=0.004)  # 4 KiB parts: the state spans several
    assert len(parts) > 1 and all(p.stat().st_size <= 0.004 * 2**20 + 1 for p in parts)
    restored = tmp_path / "machine2" / "learning"
    assert ls.unpack(tmp_path / "back", restored) == len(names)
    for n in names:
        assert (restored / n).read_bytes() == (out / n).read_bytes()
    assert _names(restored) == names


def test_once_the_later_phases_have_run_their_parents_checkpoints_stay_behind(tmp_path):
    out = _experiment(tmp_path)
    seed = out / "seed0"
    for arm in ("grpo", "shuffled"):
        (seed / arm / "evaluation" / "grpo.json").write_text("{}")
    _arm(seed, "sft_long", evaluated=True)
    (seed / "search" / "evaluation").mkdir(parents=True)
    assert {n.split("/")[1] for n in _names(out) if "/checkpoint/" in n} == {"sft"}  # the search is not evaluated
    (seed / "search" / "evaluation" / "search.json").write_text("{}")
    assert not any("/checkpoint/" in n for n in _names(out))


def test_a_missing_part_an_oversized_state_and_a_folder_already_there_are_refused(tmp_path):
    out = _experiment(tmp_path)
    with pytest.raises(ValueError, match="more than --max-parts 2"):
        ls.pack(out, tmp_path / "big", part_mib=0.004, max_parts=2)
    assert not (tmp_path / "big").exists()
    parts = ls.pack(out, tmp_path / "back", part_mib=0.004)
    with pytest.raises(ValueError, match="exists: the machine's own experiment folder is kept"):
        ls.unpack(tmp_path / "back", out)
    assert len(parts) >= 3
    target = tmp_path / "machine2" / "learning"
    for lost, says in ((1, "part-01 is missing"), (len(parts) - 1, "do not make a whole state")):
        kept = parts[lost].read_bytes()
        parts[lost].unlink()  # a gap in the numbering, then the last part (found by gzip's trailer, not the names)
        with pytest.raises(ValueError, match=says):
            ls.unpack(tmp_path / "back", target)
        assert not target.exists() and not target.with_name("learning.unpacking").exists()
        parts[lost].write_bytes(kept)
    # the last part holding only gzip's trailer (what CI met on 2026-12-07): still refused without it
    whole = b"".join(p.read_bytes() for p in parts)
    for p in parts:
        p.unlink()
    (tmp_path / "back" / f"{ls.PREFIX}00").write_bytes(whole[:-8])
    (tmp_path / "back" / f"{ls.PREFIX}01").write_bytes(whole[-8:])
    assert ls.unpack(tmp_path / "back", tmp_path / "whole") > 0  # the twin: every part there
    (tmp_path / "back" / f"{ls.PREFIX}01").unlink()
    with pytest.raises(ValueError, match="do not make a whole state"):
        ls.unpack(tmp_path / "back", target)
    (tmp_path / "back" / f"{ls.PREFIX}00").write_bytes(whole[:100] + bytes([whole[100] ^ 0xFF]) + whole[101:])
    (tmp_path / "back" / f"{ls.PREFIX}01").write_bytes(b"")
    with pytest.raises((ValueError, tarfile.TarError)):  # a damaged byte: gzip's checksum (or the inflate) says so
        ls.unpack(tmp_path / "back", target)
    assert not target.exists()
    with pytest.raises(ValueError, match="no learning-state"):
        ls.unpack(tmp_path / "empty", tmp_path / "x")
