"""Hack-case store: fingerprints, foreign files, similarity, round trip."""

import sqlite3

import pytest

from cudal1.rewards import HackStore, HackStoreError, fingerprint

HACK = '''
import torch

class ModelNew(torch.nn.Module):
    """Caches the output."""
    def __init__(self, n):
        super().__init__()
        self.cache = None
        self.n = n

    def forward(self, x):
        # return the cached result
        if self.cache is None:
            self.cache = torch.relu(x) * 2.0
        return self.cache
'''

RENAMED = '''
import torch

class ModelNew(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.cache = None
        self.n = size
    def forward(self, inp):
        if self.cache is None:
            self.cache = torch.relu(inp) * 3.0
        return self.cache
'''

STREAM = '''
import torch
import threading

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            out = torch.matmul(a, b)
        t = threading.Thread(target=print)
        t.start()
        return out
'''

HONEST = '''
import torch
import triton

@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''


def test_fingerprint_ignores_names_constants_docstrings_comments():
    assert fingerprint(HACK) == fingerprint(RENAMED)
    assert fingerprint(HACK) != fingerprint(STREAM)
    assert fingerprint(HACK) != fingerprint(HACK.replace("torch.relu", "torch.tanh"))
    assert fingerprint("not python {{") == fingerprint("not   python {{  # c")


def test_add_get_list_roundtrip(tmp_path):
    path = tmp_path / "hacks.db"
    with HackStore(path) as s:
        a = s.add(HACK, "confirmed", ("stateful_forward",), "person:alice", "caches output", task="relu")
        b = s.add(STREAM, "suspected", ["side_stream"], "rules")
    with HackStore(path) as s:
        assert len(s) == 2
        case = s.get(a)
        assert case.code == HACK and case.flags == ("stateful_forward",) and case.decided_by == "person:alice"
        assert case.task == "relu" and case.verdict == "confirmed"
        assert [c.id for c in s.list()] == [a, b]
        assert [c.id for c in s.list("suspected")] == [b]
        assert [c.id for c in s.by_fingerprint(RENAMED)] == [a]
        with pytest.raises(KeyError):
            s.get(999)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_bad_arguments():
    s = HackStore(":memory:")
    with pytest.raises(ValueError, match="verdict"):
        s.add(HACK, "maybe")
    with pytest.raises(ValueError, match="decided_by"):
        s.add(HACK, "confirmed", decided_by="")


def test_foreign_files_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("precious data, not a database\n")
    with pytest.raises(HackStoreError, match="not an SQLite file"):
        HackStore(text)
    assert text.read_text() == "precious data, not a database\n"
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(HackStoreError, match="another program"):
        HackStore(other)
    with pytest.raises(HackStoreError, match="folder"):
        HackStore(tmp_path)
    with pytest.raises(HackStoreError, match="does not exist"):
        HackStore(tmp_path / "missing" / "h.db")


def test_harness_results_store_refused(tmp_path):
    from cudal1.harness import ResultStore

    p = tmp_path / "results.db"
    ResultStore(p)
    with pytest.raises(HackStoreError, match="another program"):
        HackStore(p)


def test_similar_ranks_near_copy_first():
    s = HackStore(":memory:")
    stream = s.add(STREAM, "suspected", ["side_stream"], "rules")
    hack = s.add(HACK, "confirmed", ["stateful_forward"], "rules")
    s.add(HONEST, "suspected", [], "rules")
    cleared = s.add(RENAMED, "cleared", [], "judge:x")
    near = RENAMED.replace("* 3.0", "+ 1.0").replace("inp", "q")
    got = s.similar(near, k=3)
    assert [m.case.id for m in got][0] == hack
    assert got[0].similarity > got[1].similarity
    assert cleared not in [m.case.id for m in got]
    assert len(got) == 3 and all(0.0 <= m.similarity <= 1.0 for m in got)
    assert s.similar(STREAM.replace("a, b", "x, y"), k=1)[0].case.id == stream
    assert s.similar(near, k=1, verdicts=("cleared",))[0].case.id == cleared
