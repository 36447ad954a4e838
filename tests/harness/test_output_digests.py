"""Digests and samples of outputs, read by the parent: tolerances, batches digested as each output alone, the
outbox reader, committed outputs, and the fast path against the float64 formulas."""

from __future__ import annotations

import os

import pytest
import torch

from cudal1.harness.compare import resolve_tolerance
from cudal1.harness.digest import digest_tensor, digests_agree, sample_count, sample_positions
from cudal1.harness.leaves import LeafError, judge, parse_leaves, read_samples
from cudal1.harness.outputs import Outbox, describe_output


def test_digests_accept_outputs_within_tolerance_and_reject_others():
    torch.manual_seed(0)
    ref = torch.randn(100_000)
    tol = resolve_tolerance(torch.float32)
    r = digest_tensor(ref, 7, tolerance=tol)
    rms = float(ref.square().mean().sqrt())
    worst_ok = ref + (tol.atol_at(rms) + tol.rtol * ref.abs()) * torch.sign(torch.randn(100_000))  # at the limit
    assert digests_agree(r, digest_tensor(worst_ok, 7), exact=False)[0]
    off = ref * (1 + 1e-2)  # 100x the fp32 tolerance everywhere
    assert not digests_agree(r, digest_tensor(off, 7), exact=False)[0]
    # 20x the tolerance everywhere (a bf16-like error): the weighted sums see it as a random walk of the errors, so
    # one digest pair catches it with a probability (about 80% here), not for certain: the values sampled in the
    # correctness trials and in a tenth of the timed rounds do
    near = ref * (1 + 2e-3)
    caught = sum(not digests_agree(digest_tensor(ref, s, tolerance=tol), digest_tensor(near, s), exact=False)[0]
                 for s in range(20))
    assert caught >= 12, caught
    nan = ref.clone()
    nan[5] = float("nan")
    ok, why = digests_agree(r, digest_tensor(nan, 7), exact=False)
    assert not ok and "NaN" in why
    # the digest depends on the weights' seed: a digest made before the seed was known does not match
    assert not digests_agree(r, digest_tensor(ref, 8), exact=False)[0]


def _digest_by_formula(t, seed, tol):
    """The module docstring's formulas, written out on one flat float64 tensor (no chunks, no batching)."""
    import math

    def fmix32(h: int) -> int:  # MurmurHash3's finaliser, in Python integers
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & 0xFFFFFFFF
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & 0xFFFFFFFF
        return h ^ (h >> 16)

    flat = t.reshape(-1)
    x = (torch.view_as_real(flat).reshape(-1) if flat.is_complex() else flat).to(torch.float64)
    fin = torch.isfinite(x)
    counts = (int(torch.isnan(x).sum()), int(torch.isposinf(x).sum()), int(torch.isneginf(x).sum()))
    x = torch.where(fin, x, 0.0)
    h = torch.tensor([fmix32(fmix32(i ^ (seed & 0xFFFFFFFF)) ^ ((seed >> 32) & 0xFFFFFFFF)) for i in range(x.numel())],
                     dtype=torch.int64)
    w, u = 1.0 - 2.0 * (h & 1).double(), 1.0 - 2.0 * ((h >> 1) & 1).double()
    n = int(fin.sum()) if (t.is_floating_point() or t.is_complex()) else x.numel()
    rms = math.sqrt(float((x * x).sum()) / n) if n else 0.0
    tau = tol.atol_at(rms) + tol.rtol * x.abs()
    s1, s2 = float((tau * tau).sum()), float((tau * (2 * x.abs() + tau)).square().sum())
    return (float((w * x).sum()), float((u * x * x).sum()), float(x.abs().sum()), float((x * x).sum()), *counts,
            rms, math.sqrt(s1) if tol.rtol or tol.atol_at(rms) else 0.0, math.sqrt(s2) if tol.rtol or tol.atol_at(rms) else 0.0)


def test_a_batch_of_outputs_is_digested_as_each_output_alone(monkeypatch):
    """digest_tensors (a timed batch's outputs at once: stacked rows, large leaves in chunks) gives every
    leaf the digest the formulas give it alone: mixed sizes, dtypes, non-finite values, empty leaves."""
    import cudal1.harness.digest as dg
    from cudal1.harness.digest import digest_tensors

    monkeypatch.setattr(dg, "CHUNK", 256)  # leaves over 128 elements take the chunked path
    torch.manual_seed(1)
    special = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.0])
    ts = [torch.randn(8, 9), torch.randn(8, 9) * 5, torch.randn(8, 9).half(), torch.randint(-3, 9, (7,)),
          torch.randn(6, dtype=torch.complex64), special, torch.zeros(0), torch.randn(4) > 0, torch.randn(1000),
          torch.randn(300) * 1e-3]
    tols = [resolve_tolerance(t.dtype) for t in ts]
    tols[1] = None  # a candidate-side digest among reference-side ones
    got = digest_tensors(ts, 11, tols)
    for t, tol, d in zip(ts, tols, got, strict=True):
        want = _digest_by_formula(t, 11, tol or resolve_tolerance(t.dtype))
        have = (d.d1, d.d2, d.a1, d.a2, d.nan, d.posinf, d.neginf)
        # finite floating outputs are summed in their own precision over chunks, the chunks in float64 (digest's fast
        # path): within float32 rounding of the sums' scale; the others exactly as the float64 formulas
        fast = (t.dtype.is_floating_point or t.dtype.is_complex) and bool(torch.isfinite(t).all())
        rel = 1e-6 if fast else 1e-12
        scale = (want[2], want[3], want[2], want[3])
        assert all(abs(h - w) <= rel * sc + 1e-12 for h, w, sc in zip(have[:4], want[:4], scale, strict=True)), (
            t.dtype, tuple(t.shape), have, want)
        assert have[4:] == tuple(want[4:7])
        if tol is None:
            assert d.rms is None and d.s1 is None
        else:
            assert (d.rms, d.s1, d.s2) == pytest.approx(want[7:], rel=max(rel, 1e-9), abs=1e-12), (t.dtype,
                                                                                                  tuple(t.shape))
        assert digests_agree(digest_tensor(t, 11, tolerance=tol), d, exact=False)[0]
    with pytest.raises(ValueError, match="one tolerance"):
        digest_tensors(ts, 11, tols[:-1])


def test_samples_cover_small_outputs_fully_and_large_ones_at_the_same_positions():
    assert sample_positions(1000, 1) is None and sample_count(1000) == 1000
    big = 10_000_000
    a, b = sample_positions(big, 5), sample_positions(big, 5)
    assert torch.equal(a, b) and a.numel() == sample_count(big) and int(a.max()) < big
    assert a[0] == 0 and a[2 * 65536 - 1] == big - 1  # both ends are always sampled
    assert not torch.equal(a, sample_positions(big, 6))


def test_judge_compares_leaves_through_the_outbox(tmp_path):
    ref_box, cand_box = tmp_path / "r", tmp_path / "c"
    ref_box.mkdir()
    cand_box.mkdir()
    x = torch.randn(64, 32)

    def leaves(t, box, reference):
        ob = Outbox(box, "o")
        try:
            return parse_leaves(describe_output(t, digest_seed=3, sample_seed=4, outbox=ob, reference=reference))
        finally:
            ob.close()

    r = leaves(x, ref_box, True)
    assert judge(r, leaves(x.clone(), cand_box, False), ref_box, cand_box).ok
    wrong = x.clone()
    wrong[3, 4] += 1.0
    cmp = judge(r, leaves(wrong, cand_box, False), ref_box, cand_box)
    assert not cmp.ok and "1 of 2048 elements outside tolerance" in cmp.reason
    assert "shape" in judge(r, leaves(x[:10], cand_box, False), ref_box, cand_box).reason
    assert "tensor subclass" in judge(r, [r[0].__class__(**{**r[0].__dict__, "exact": False})], ref_box,
                                      cand_box).reason


def test_outbox_reader_refuses_links_and_short_files(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    ob = Outbox(box, "o")
    leaf = parse_leaves(describe_output(torch.randn(10), digest_seed=None, sample_seed=1, outbox=ob))[0]
    ob.close()
    assert read_samples(box, leaf).numel() == 10
    (box / "o.bin").unlink()
    secret = tmp_path / "secret"
    secret.write_bytes(b"x" * 4096)
    os.symlink(secret, box / "o.bin")  # the worker replaced its file by a link to a file of the parent's
    with pytest.raises(OSError):
        read_samples(box, leaf)
    (box / "o.bin").unlink()
    (box / "o.bin").write_bytes(b"\0" * 8)
    with pytest.raises(LeafError, match="holds 8 bytes"):
        read_samples(box, leaf)
    with pytest.raises(LeafError, match="not a plain name"):
        parse_leaves([{"kind": "tensor", "dtype": "float32", "shape": [1], "device": "cpu", "exact": True,
                       "sample": {"file": "../../etc/passwd", "offset": 0, "count": 1}}])


def test_committed_outputs_are_digested_by_the_parent_as_the_worker_would(tmp_path):
    """A committed batch (CPU): every value of every output goes to the outbox inside the clocked window and the
    parent digests it; the digests equal the worker's own, for every dtype the outbox carries. What the worker wrote
    is checked like any sample file: a count that is not the leaf's size, a short file, a link."""
    from cudal1.harness.leaves import committable, digest_committed
    from cudal1.harness.outputs import commit_outputs, describe_outputs

    outs = [(torch.randn(3, 4), torch.arange(5), 7, torch.randn(2, dtype=torch.complex64)),
            (torch.randn(3, 4).bfloat16(), torch.tensor([True, False]), 7, torch.randn(2, dtype=torch.complex64))]
    box = tmp_path / "box"
    box.mkdir()
    (box / "committed.bin").write_bytes(b"\xff" * 4096)  # the last batch's file, longer: written over in place
    recs = commit_outputs(outs, box, "committed")
    parsed = tuple(tuple(parse_leaves(r)) for r in recs)
    assert committable(parsed[0]) and all(leaf.digest is None for leaf in parsed[0])
    got = digest_committed(parsed, box, seed=99, reference=True)
    want = describe_outputs(outs, digest_seed=99, reference=True)
    for g, w in zip(got, want, strict=True):
        assert [leaf.digest for leaf in g] == [leaf.digest for leaf in parse_leaves(w)]
    assert judge(list(got[0]), list(got[0]), box, box, check_samples=False).ok
    bad = parse_leaves([{**recs[0][0], "sample": {**recs[0][0]["sample"], "count": 3}}])
    with pytest.raises(LeafError):
        digest_committed((tuple(bad),), box, seed=1)
    (box / "committed.bin").write_bytes(b"\0" * 8)
    with pytest.raises(LeafError, match="holds 8 bytes"):
        digest_committed(parsed, box, seed=1)
    (box / "committed.bin").unlink()
    os.symlink(tmp_path / "elsewhere", box / "committed.bin")
    with pytest.raises(OSError):
        digest_committed(parsed, box, seed=1)
    huge = parse_leaves([{"kind": "tensor", "dtype": "float32", "shape": [1 << 23], "device": "cpu", "exact": True}])
    assert not committable(huge) and not committable([{"kind": "tensor", "dtype": "float8", "shape": [2]}])


def test_fast_digests_agree_with_the_float64_formulas_far_inside_the_tolerance_bound():
    """The digest's fast path sums float32 outputs in float32 over 4096-element chunks, the chunks in float64: its
    figures differ from the float64 general path by under 1e-3 of the bound digests are compared within."""
    import cudal1.harness.digest as dg

    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        tol = resolve_tolerance(dtype)
        ts = [(torch.randn(shape) * 3 + 0.5).to(dtype) for shape in [(64, 96), (300_001,), (3, 5000), (7,)]]
        fast = dg.digest_tensors(ts, 5, [tol] * len(ts))
        hashes: dict = {}

        def weights(lo, m, dev):
            if (lo, m, dev) not in hashes:
                hashes[(lo, m, dev)] = dg.weight_signs(lo, m, 5, dev)
            return hashes[(lo, m, dev)]

        exact = dg._digest_general(ts, 5, [tol] * len(ts), list(dg._blocks(ts)), weights)
        for f, e in zip(fast, exact, strict=True):
            for name, bound in (("d1", e.s1), ("d2", e.s2), ("s1", e.s1), ("s2", e.s2)):
                assert abs(getattr(f, name) - getattr(e, name)) <= 1e-3 * bound, (dtype, name)
            assert digests_agree(e, f, exact=False)[0]
