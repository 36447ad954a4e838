"""Parent side: a model's output as the parent sees it, a list of leaves, each a tensor (its dtype, shape, device, a
digest and samples of its values, written to the worker's outbox) or a plain value.

A worker writes the records and value files (:mod:`cudal1.harness.outputs`); here :func:`parse_leaves` checks each
record, :func:`read_samples` reads values back (a regular file, no links, exact sizes), :func:`digest_committed`
digests a committed batch's values itself, :func:`committable` says whether an output can be committed whole, and
:func:`judge` compares a candidate's leaves with the reference's. Nothing a worker sends is trusted beyond its shape:
every number is checked against what the parent expects (counts from shapes, dtypes from a fixed list,
:mod:`cudal1.harness.wire`).
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from .compare import Comparison, compare_tensor, resolve_tolerance
from .digest import FULL_MAX, Digest, digest_tensors, digests_agree, sample_count
from .wire import DTYPES, MAX_VALUE_CHARS


class LeafError(ValueError):
    """A leaf record or its sample file is malformed (the worker broke the protocol)."""


@dataclass(frozen=True)
class Leaf:
    """One validated leaf record."""

    kind: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    device: str = ""
    exact: bool = True
    storage: bool = True
    digest: Digest | None = None
    sample: tuple[str, int, int, int | None] | None = None  # (file, offset, count, seed)
    value: Any = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _num(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise LeafError(f"{what} is not a number")
    return float(x)


def _int(x: Any, what: str, lo: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < lo:
        raise LeafError(f"{what} is not an integer >= {lo}")
    return x


def parse_leaf(d: Any) -> Leaf:
    """A :class:`Leaf` from a worker's record; :class:`LeafError` when anything is malformed."""
    if not isinstance(d, dict):
        raise LeafError("leaf record is not an object")
    kind = d.get("kind")
    if kind == "value":
        v = d.get("value")
        if not (v is None or isinstance(v, (bool, int, float, str))) or (isinstance(v, str) and len(v) > MAX_VALUE_CHARS):
            raise LeafError("value leaf holds a non-scalar")
        return Leaf("value", value=v)
    if kind == "object":
        t = d.get("type")
        if not isinstance(t, str) or len(t) > 100:
            raise LeafError("object leaf without a type name")
        return Leaf("object", value=t)
    if kind != "tensor":
        raise LeafError(f"unknown leaf kind {kind!r}")
    dtype, shape, device = d.get("dtype"), d.get("shape"), d.get("device")
    if not isinstance(dtype, str) or len(dtype) > 40 or not isinstance(device, str) or len(device) > 40:
        raise LeafError("tensor leaf without dtype/device")
    if not isinstance(shape, list) or len(shape) > 16:
        raise LeafError("tensor leaf shape is not a list of at most 16 sizes")
    shp = tuple(_int(s, "shape entry") for s in shape)
    if math.prod(shp) > 1 << 40:
        raise LeafError("tensor leaf larger than 2^40 elements")
    dig = None
    if d.get("digest") is not None:
        g = d["digest"]
        if not isinstance(g, dict):
            raise LeafError("digest is not an object")
        opt = {k: (None if g.get(k) is None else _num(g.get(k), k)) for k in ("rms", "s1", "s2")}
        dig = Digest(_num(g.get("d1"), "d1"), _num(g.get("d2"), "d2"), _num(g.get("a1"), "a1"), _num(g.get("a2"), "a2"),
                     _int(g.get("nan"), "nan"), _int(g.get("posinf"), "posinf"), _int(g.get("neginf"), "neginf"), **opt)
    smp = None
    if d.get("sample") is not None:
        s = d["sample"]
        if not isinstance(s, dict) or not isinstance(s.get("file"), str):
            raise LeafError("sample is not an object with a file")
        name = s["file"]
        if "/" in name or name.startswith(".") or not name.endswith(".bin") or len(name) > 64:
            raise LeafError(f"sample file name {name!r} is not a plain name in the outbox")
        seed = s.get("seed")
        smp = (name, _int(s.get("offset"), "offset"), _int(s.get("count"), "count"),
               None if seed is None else _int(seed, "seed"))
    return Leaf("tensor", dtype, shp, device, bool(d.get("exact")), bool(d.get("storage")), dig, smp)


def parse_leaves(raw: Any) -> list[Leaf]:
    if not isinstance(raw, list) or len(raw) > 256:
        raise LeafError("output is not a list of at most 256 leaves")
    return [parse_leaf(x) for x in raw]


def read_samples(outbox: Path, leaf: Leaf) -> torch.Tensor:
    """The sampled values of a tensor leaf, read from the worker's outbox: a regular file (no link), exactly
    the expected number of values for the leaf's shape (all of them, or :func:`~digest.sample_count`)."""
    if leaf.sample is None or leaf.dtype not in DTYPES:
        raise LeafError("tensor leaf without samples")
    name, offset, count, _seed = leaf.sample
    if count != sample_count(leaf.numel):
        raise LeafError(f"{count} samples sent for a leaf of {leaf.numel} elements (expected {sample_count(leaf.numel)})")
    dtype = DTYPES[leaf.dtype]
    item = torch.empty((), dtype=dtype).element_size()
    nbytes = count * item
    fd = os.open(outbox / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LeafError(f"{name} in the outbox is not a regular file")
        if st.st_size < offset + nbytes:
            raise LeafError(f"{name} holds {st.st_size} bytes, the leaf needs {offset + nbytes}")
        buf = bytearray(nbytes)
        view = memoryview(buf)
        got = 0
        while got < nbytes:
            n = os.preadv(fd, [view[got:]], offset + got)
            if n <= 0:
                raise LeafError(f"{name} ended early")
            got += n
    finally:
        os.close(fd)
    if nbytes == 0:
        return torch.empty(0, dtype=dtype)
    if dtype.is_complex:
        real = torch.frombuffer(buf, dtype=torch.float32 if dtype == torch.complex64 else torch.float64)
        return torch.view_as_complex(real.reshape(-1, 2))
    return torch.frombuffer(buf, dtype=dtype)


def committable(leaves: list[dict] | tuple[Any, ...], numel_max: int = FULL_MAX) -> bool:
    """Whether an output laid out as ``leaves`` (records, or parsed :class:`Leaf` objects) can be committed whole:
    every tensor leaf of a dtype the outbox carries and at most ``numel_max`` elements."""
    for leaf in leaves:
        kind = leaf["kind"] if isinstance(leaf, dict) else leaf.kind
        if kind != "tensor":
            continue
        dtype = leaf["dtype"] if isinstance(leaf, dict) else leaf.dtype
        shape = leaf["shape"] if isinstance(leaf, dict) else leaf.shape
        if dtype not in DTYPES or math.prod(shape) > numel_max:
            return False
    return True


def digest_committed(outputs: tuple[tuple[Leaf, ...], ...], outbox: Path, seed: int, *, rtol: float | None = None,
                     atol: float | None = None, reference: bool = False) -> tuple[tuple[Leaf, ...], ...]:
    """Parent side: the committed outputs of a timed batch (:func:`~cudal1.harness.outputs.commit_outputs`) with their digests under ``seed``,
    computed here from the values read back from ``outbox`` (with the tolerance sums when ``reference``). Call it only
    while the worker that wrote them is stopped. A tensor leaf whose values were not committed keeps no digest (the
    judge fails it); :class:`LeafError` when a committed file is malformed."""
    found: list[tuple[int, int, Leaf, torch.Tensor]] = []
    for i, leaves in enumerate(outputs):
        for j, leaf in enumerate(leaves):
            if leaf.kind != "tensor" or leaf.sample is None or leaf.sample[3] is not None:
                continue
            if leaf.numel > FULL_MAX or leaf.sample[2] != leaf.numel:
                raise LeafError(f"committed values of a leaf of {leaf.numel} elements: {leaf.sample[2]}")
            found.append((i, j, leaf, read_samples(outbox, leaf).reshape(leaf.shape)))
    tols = [resolve_tolerance(DTYPES[leaf.dtype], rtol, atol) if reference else None for _, _, leaf, _ in found]
    digests = digest_tensors([t for *_, t in found], seed, tols) if found else []
    out = [list(leaves) for leaves in outputs]
    for (i, j, leaf, _), d in zip(found, digests, strict=True):
        out[i][j] = replace(leaf, digest=d)
    return tuple(tuple(leaves) for leaves in out)


def judge(ref: list[Leaf], cand: list[Leaf], ref_box: Path, cand_box: Path, *, rtol: float | None = None,
          atol: float | None = None, check_digests: bool = True, check_samples: bool = True) -> Comparison:
    """Compare a candidate's output leaves with the reference's (structure, type, dtype, shape, device, non-finite
    counts, digests, then sampled values within tolerance). Returns the worst :class:`Comparison`."""
    if len(cand) != len(ref):
        return Comparison(False, f"output has {len(cand)} leaves (tensors/values), expected {len(ref)}")
    worst = Comparison(True)
    for i, (r, c) in enumerate(zip(ref, cand, strict=True)):
        where = "output" if len(ref) == 1 else f"output[{i}]"
        if r.kind != "tensor":
            if (c.kind, c.value) != (r.kind, r.value):
                return Comparison(False, f"{where} is {c.kind} {c.value!r}, expected {r.kind} {r.value!r}")
            continue
        if c.kind != "tensor":
            return Comparison(False, f"{where} is a {c.kind} ({c.value!r}), expected a tensor")
        if not c.exact:
            return Comparison(False, f"{where} is a tensor subclass, expected an exact torch.Tensor")
        if not c.storage:
            return Comparison(False, f"{where} has no storage (lazy or fake tensor)")
        if c.shape != r.shape:
            return Comparison(False, f"{where} has shape {c.shape}, expected {r.shape}")
        if c.dtype != r.dtype:
            return Comparison(False, f"{where} has dtype {c.dtype}, expected {r.dtype}")
        if c.device != r.device:
            return Comparison(False, f"{where} is on {c.device}, expected {r.device}")
        dtype = DTYPES.get(r.dtype)
        tol = resolve_tolerance(dtype, rtol, atol) if dtype is not None else None
        if check_samples and r.sample is not None:
            if c.sample is None or c.sample[3] != r.sample[3]:
                return Comparison(False, f"{where}: samples missing or drawn with another seed")
            rv, cv = read_samples(ref_box, r), read_samples(cand_box, c)
            rms = r.digest.rms if r.digest is not None else None
            cmp = compare_tensor(cv, rv, rtol=tol.rtol if tol else rtol, atol=atol, where=where, ref_rms=rms)
            if not cmp.ok:
                return cmp
            worst = Comparison(True, "", max(worst.max_abs_err, cmp.max_abs_err),
                               max(worst.max_rel_err, cmp.max_rel_err), cmp.rtol, cmp.atol)
        if check_digests and r.digest is not None:
            if c.digest is None:
                return Comparison(False, f"{where}: no digest sent")
            ok, why = digests_agree(r.digest, c.digest, exact=tol is None or tol.exact)
            if not ok:
                return Comparison(False, f"{where}: {why}")
    return worst
