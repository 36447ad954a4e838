"""Output digests and samples: how the parent checks outputs it does not copy in full.

An output tensor leaf of N elements is observed by the parent through

* **samples**: every element when N <= :data:`FULL_MAX`, else the first and last :data:`EDGE` elements plus
  :data:`RANDOM_SAMPLES` positions drawn from a seed the parent chooses *after* the output exists. Both
  workers gather the same positions; the parent compares them elementwise with the task's tolerance.
* **a digest**: ``d1 = sum(w_i * x_i)`` and ``d2 = sum(u_i * x_i**2)`` over the finite values, with ``w_i, u_i``
  in {-1, +1} from a keyed hash of the position and a parent-chosen seed (:func:`weight_signs`), plus the counts
  of NaN, +Inf and -Inf. Outputs whose values are all finite are summed in their own precision over blocks of
  4096 values, the blocks in float64 (on a GPU in one pass, :mod:`cudal1.harness.digest_kernel`); others in float64. Computing ``d2`` needs every element of the output (a cheaper route to it, as
  ``w^T A x`` is for ``d1`` of a matrix product, does not exist in general), so a batch whose digests are
  on the parent's clock has computed its outputs on that clock.

The reference worker also sends ``s1 = sqrt(sum tau_i^2)`` and ``s2 = sqrt(sum tau_i^2 (2|r_i| + tau_i)^2)``,
``tau_i = atol + rtol |r_i|``: if every candidate element is within tolerance, ``|d1_c - d1_r|`` and
``|d2_c - d2_r|`` are sums of independent +-1-weighted terms bounded by ``tau_i`` and ``tau_i (2|r_i| +
tau_i)``, so by Hoeffding's inequality they exceed :data:`SIGMAS` times ``s1``/``s2`` with probability under
2 exp(-SIGMAS^2 / 2) (about 3e-8). Larger differences mean the outputs differ beyond tolerance.

The hash is computed with int64 tensor arithmetic (masked to 32 bits), identically on the CPU, on CUDA and in the
GPU kernel, so every path gives the same digest up to the sums' rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from .compare import Tolerance

FULL_MAX = 1 << 22  #: leaves up to this many elements are copied to the parent in full
EDGE = 1 << 16  #: elements at each end of a larger leaf that are always sampled
RANDOM_SAMPLES = (1 << 22) - 2 * EDGE  #: random positions sampled from a larger leaf
CHUNK = 1 << 24  #: elements digested at a time (bounds float64 temporaries to 128 MB)
SIGMAS = 6.0  #: digest bound in units of s1 / s2 (false alarm below 3e-8 per comparison)
_M1 = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
_M2 = -4658895280553007687  # 0xBF58476D1CE4E5B9 as int64
_M3 = -7723592293110705685  # 0x94D049BB133111EB as int64


def _mix(x: torch.Tensor) -> torch.Tensor:
    """A splitmix64-style mixer on int64 (wrapping multiply; arithmetic shifts, the same on every device)."""
    x = x * _M2
    x = x ^ (x >> 29)
    x = x * _M3
    return x ^ (x >> 32)


def position_hash(start: int, count: int, seed: int, device: torch.device | str) -> torch.Tensor:
    """int64 hashes of positions ``start .. start+count-1`` under ``seed``."""
    i = torch.arange(start, start + count, dtype=torch.int64, device=device)
    return _mix(i * _M1 + (seed & 0x7FFFFFFFFFFFFFFF))


_MASK32 = 0xFFFFFFFF


def _fmix32(h: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's 32-bit finaliser on int64 tensors holding values below 2**32 (products wrap, then masked)."""
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & _MASK32
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def weight_signs(start: int, count: int, seed: int, device: torch.device | str,
                 dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """The digest's weights ``w``, ``u`` (each +1 or -1) of positions ``start .. start+count-1`` under ``seed``: two
    bits of a 32-bit mix of the position and the seed's two halves. The GPU kernel
    (:mod:`cudal1.harness.digest_kernel`) computes the same signs in registers."""
    i = torch.arange(start, start + count, dtype=torch.int64, device=device) & _MASK32
    h = _fmix32(_fmix32(i ^ (seed & _MASK32)) ^ ((seed >> 32) & _MASK32))
    return (1 - 2 * (h & 1)).to(dtype), (1 - 2 * ((h >> 1) & 1)).to(dtype)


def sample_positions(numel: int, seed: int, device: torch.device | str = "cpu") -> torch.Tensor | None:
    """Positions sampled from a flat leaf of ``numel`` elements (None: all of them)."""
    if numel <= FULL_MAX:
        return None
    head = torch.arange(0, EDGE, dtype=torch.int64, device=device)
    tail = torch.arange(numel - EDGE, numel, dtype=torch.int64, device=device)
    h = position_hash(0, RANDOM_SAMPLES, seed ^ 0x5A5A5A5A, device)
    rnd = torch.remainder(h, numel)
    return torch.cat([head, tail, rnd])


def sample_count(numel: int) -> int:
    """How many values :func:`sample_positions` yields for a leaf of ``numel`` elements."""
    return numel if numel <= FULL_MAX else 2 * EDGE + RANDOM_SAMPLES


@dataclass(frozen=True)
class Digest:
    """Digest of one tensor leaf (see the module docstring). ``s1``/``s2``/``rms`` only from the reference."""

    d1: float
    d2: float
    a1: float  # sum |x|: scale of d1's rounding error
    a2: float  # sum x^2: scale of d2's rounding error
    nan: int
    posinf: int
    neginf: int
    rms: float | None = None
    s1: float | None = None
    s2: float | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def digest_tensor(t: torch.Tensor, seed: int, *, tolerance: Tolerance | None = None) -> Digest:
    """The digest of ``t`` (any device; computed where it lives, in chunks).

    With ``tolerance`` (the reference side), ``rms`` over the finite values and the bounds ``s1``, ``s2`` are
    computed too, with ``atol`` = ``tolerance.atol_at(rms)``.
    """
    return digest_tensors([t], seed, [tolerance])[0]


@dataclass
class _Block:
    """Rows ``rows`` of the digest, each ``x.shape[1]`` elements starting at flat position ``lo`` (float64)."""

    rows: list[int]
    lo: int
    x: torch.Tensor  # [len(rows), m] float64
    is_float: bool


def _count(t: torch.Tensor) -> int:
    """Values in ``t``'s digest (a complex element is two), without touching its memory."""
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _flat(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1)
    return torch.view_as_real(flat).reshape(-1) if flat.dtype.is_complex else flat


def _grouped(ts: list[torch.Tensor], indices: list[int], dtype_of) -> Iterator[tuple[list[int], int, torch.Tensor]]:
    """``(rows, lo, x)`` blocks of the tensors ``ts[i]`` for ``i`` in ``indices``, ``x`` of shape ``[len(rows), m]``
    in ``dtype_of(tensor)``: large tensors in chunks of at most :data:`CHUNK` elements (one row each, ``lo`` the
    chunk's first position), small ones of one shape, dtype and device stacked as rows of one block (one set of
    kernels for a whole batch of outputs). A small output is stacked in its own shape, then flattened: the stack's
    one copy reads any layout, so a transposed view costs the digest what a contiguous output does (flattening it
    first was a copy of its own, paid inside the parent's clocked window: a legitimate candidate returning a
    transposed view was rejected for it on an H100, benchmarks/results/2026-12-05-learning-grpo-h100.md)."""
    groups: dict[tuple, list[int]] = {}
    for i in indices:
        t = ts[i]
        n = _count(t)
        if n > CHUNK // 2:
            flat = _flat(t)
            for lo in range(0, n, CHUNK):
                yield [i], lo, flat[lo : lo + CHUNK].to(dtype_of(t)).unsqueeze(0)
        else:
            groups.setdefault((tuple(t.shape), n, t.dtype, t.device), []).append(i)
    for (_shape, n, dtype, _dev), idx in groups.items():
        per = max(1, CHUNK // max(n, 1))
        for k in range(0, len(idx), per):
            rows = idx[k : k + per]
            if dtype.is_complex:
                yield rows, 0, torch.stack([_flat(ts[i]).to(dtype_of(ts[i])) for i in rows])
            else:
                yield rows, 0, torch.stack([ts[i].detach() for i in rows]).reshape(len(rows), n).to(dtype_of(ts[rows[0]]))


def _floating(t: torch.Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _blocks(ts: list[torch.Tensor]) -> Iterator[_Block]:
    """The tensors as float64 blocks (:func:`_grouped`), for the general path."""
    for rows, lo, x in _grouped(ts, list(range(len(ts))), lambda t: torch.float64):
        yield _Block(rows, lo, x, _floating(ts[rows[0]]))


def _gather(parts: list[tuple[list[int], torch.Tensor]], count: int, width: int) -> list[list[float]]:
    """Sum per-block partial rows ``[len(rows), width]`` into ``count`` rows on the CPU (one copy per device)."""
    out = torch.zeros(count, width, dtype=torch.float64)
    by_dev: dict[torch.device, list[tuple[list[int], torch.Tensor]]] = {}
    for rows, p in parts:
        by_dev.setdefault(p.device, []).append((rows, p))
    for items in by_dev.values():
        host = torch.cat([p for _, p in items]).cpu()
        idx = torch.tensor([r for rows, _ in items for r in rows], dtype=torch.int64)
        out.index_add_(0, idx, host)
    return out.tolist()


SUM_CHUNK = 4096  #: elements summed in the output's own precision before the partial sums go to float64


def _fast_blocks(ts: list[torch.Tensor]) -> Iterator[tuple[list[int], int, torch.Tensor]]:
    """The floating tensors as ``(rows, lo, x)`` blocks for :func:`_power_sums` (:func:`_grouped`) in float32
    (float64 for float64 and complex128 outputs); integer and boolean tensors are left out (the general path counts
    them exactly)."""
    return _grouped(ts, [i for i, t in enumerate(ts) if _floating(t)],
                    lambda t: torch.float64 if t.dtype in (torch.float64, torch.complex128) else torch.float32)


def _kernel_for(x: torch.Tensor):
    """The one-pass GPU digest (:mod:`cudal1.harness.digest_kernel`) for a block on a CUDA device, where Triton
    imports; None otherwise (the PyTorch path)."""
    if x.device.type != "cuda":
        return None
    try:
        from . import digest_kernel
    except Exception:  # noqa: BLE001 - no Triton here: the PyTorch path computes the same sums
        return None
    return digest_kernel


def _power_sums(ts: list[torch.Tensor], seed: int, weights) -> list[tuple[list[int], torch.Tensor]]:
    """The fast path of :func:`digest_tensors` for floating outputs: per row ``d1, d2, S1..S4`` (``S_k`` = sum of
    ``|x|**k``), from which the tolerance bounds follow in closed form (:func:`_bounds`), in one set of reductions.
    Values stay in their float32 (float64) precision: products and sums over :data:`SUM_CHUNK` elements, the
    partial sums added in float64 (the rounding of a float32 sum of 4096 terms is far below the tolerances these
    digests are compared within). NaN or infinity makes a sum non-finite, and the caller then takes the general
    path; so does an integer or boolean output, which no block covers."""
    parts = []
    for rows, lo, x in _fast_blocks(ts):
        k, m = x.shape
        kernel = _kernel_for(x)
        if kernel is not None:
            parts.append((rows, kernel.row_sums(x, lo, seed)))
            continue
        w, u = weights(lo, m, x.device)
        w, u = w.to(x.dtype), u.to(x.dtype)
        whole = m - m % SUM_CHUNK
        total = torch.zeros(k, 6, dtype=torch.float64, device=x.device)
        for a, wa, ua in ((x[:, :whole].reshape(k, -1, SUM_CHUNK), w[:whole].reshape(-1, SUM_CHUNK),
                           u[:whole].reshape(-1, SUM_CHUNK)),
                          (x[:, whole:].unsqueeze(1), w[whole:].unsqueeze(0), u[whole:].unsqueeze(0))):
            if a.numel() == 0:
                continue
            y = a.abs()
            y2 = a * a
            vd = torch.linalg.vecdot
            sums = torch.stack([vd(a, wa.expand_as(a)), vd(y2, ua.expand_as(y2)), y.sum(-1), y2.sum(-1), vd(y2, y),
                                vd(y2, y2)], dim=-1)
            total += sums.to(torch.float64).sum(1)
        parts.append((rows, total))
    return parts


def _bounds(count: int, rtol: float, atol: float, s: list[float]) -> tuple[float, float]:
    """``s1 = sqrt(sum tau_i^2)`` and ``s2 = sqrt(sum (tau_i (2|r_i| + tau_i))^2)``, ``tau_i = atol + rtol |r_i|``,
    from the power sums ``s = [S1, S2, S3, S4]`` of ``|r_i|``: both are polynomials in ``|r_i|`` with non-negative
    coefficients (no cancellation)."""
    s1_, s2_, s3_, s4_ = s
    c0, c1, c2 = atol * atol, 2.0 * atol * (1.0 + rtol), rtol * (2.0 + rtol)
    sq1 = count * atol * atol + 2.0 * atol * rtol * s1_ + rtol * rtol * s2_
    sq2 = (c0 * c0 * count + 2.0 * c0 * c1 * s1_ + (c1 * c1 + 2.0 * c0 * c2) * s2_ + 2.0 * c1 * c2 * s3_
           + c2 * c2 * s4_)
    return math.sqrt(max(sq1, 0.0)), math.sqrt(max(sq2, 0.0))


def digest_tensors(ts: list[torch.Tensor], seed: int, tolerances: list[Tolerance | None]) -> list[Digest]:
    """Digests of many tensors under one ``seed`` (a batch's outputs), with ``tolerances[i]`` as in
    :func:`digest_tensor`. Tensors of one size are digested together, and the values reach the host in one
    copy per device, so a batch of small outputs costs a few kernels, not a few per output. Outputs whose
    values are all finite take one set of reductions (the tolerance bounds from power sums of ``|x|``); others
    take the general path (NaN and infinity counts, then the bounds from the finite values)."""
    if len(ts) != len(tolerances):
        raise ValueError("one tolerance (or None) per tensor")
    hashes: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    def weights(lo: int, m: int, dev: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        key = (lo, m, dev)
        if key not in hashes:
            hashes[key] = weight_signs(lo, m, seed, dev)
        return hashes[key]

    out: list[Digest | None] = [None] * len(ts)
    fast = _power_sums(ts, seed, weights)
    if fast:
        covered = {i for rows, _ in fast for i in rows}
        for i, (t, tol, r) in enumerate(zip(ts, tolerances, _gather(fast, len(ts), 6), strict=True)):
            if i not in covered or not all(math.isfinite(v) for v in r):
                continue  # a NaN or an infinity (or an overflow): this output takes the general path
            d1, d2, a1, a2, s3_, s4_ = r
            count = _count(t)
            if tol is None:
                out[i] = Digest(d1, d2, a1, a2, 0, 0, 0)
                continue
            rms = math.sqrt(a2 / count) if count else 0.0
            b1, b2 = _bounds(count, tol.rtol, tol.atol_at(rms), [a1, a2, s3_, s4_])
            out[i] = Digest(d1, d2, a1, a2, 0, 0, 0, rms, b1, b2)
    rest = [i for i, d in enumerate(out) if d is None]
    if rest:
        sub = [ts[i] for i in rest]
        for i, d in zip(rest, _digest_general(sub, seed, [tolerances[i] for i in rest], list(_blocks(sub)), weights),
                        strict=True):
            out[i] = d
    return [d for d in out if d is not None]


def _digest_general(ts: list[torch.Tensor], seed: int, tolerances: list[Tolerance | None], blocks: list[_Block],
                    weights) -> list[Digest]:
    """:func:`digest_tensors` for outputs with NaN or infinite values, or of integer dtypes."""
    parts: list[tuple[list[int], torch.Tensor]] = []
    for b in blocks:
        x = b.x
        if b.is_float:
            nan, pinf, ninf = torch.isnan(x), torch.isposinf(x), torch.isneginf(x)
            fin = ~(nan | pinf | ninf)
            x = torch.where(fin, x, 0.0)
            counts = [nan.sum(1), pinf.sum(1), ninf.sum(1), fin.sum(1)]
        else:
            zero = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
            counts = [zero, zero, zero, torch.full_like(zero, x.shape[1])]
        w, u = weights(b.lo, x.shape[1], x.device)
        x2 = x * x
        sums = [(x * w).sum(1), (x2 * u).sum(1), x.abs().sum(1), x2.sum(1)]
        parts.append((b.rows, torch.stack(sums + [c.to(torch.float64) for c in counts], dim=1)))
    first = _gather(parts, len(ts), 8)
    digests = [Digest(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), int(r[6])) for r in first]
    want = [i for i, tol in enumerate(tolerances) if tol is not None]
    if not want:
        return digests
    rtol = [0.0] * len(ts)
    atol = [0.0] * len(ts)
    rms = [0.0] * len(ts)
    for i in want:
        tol = tolerances[i]
        assert tol is not None
        count = int(first[i][7])
        rms[i] = math.sqrt(first[i][3] / count) if count else 0.0
        rtol[i], atol[i] = tol.rtol, tol.atol_at(rms[i])
    bounded = [i for i in want if rtol[i] > 0 or atol[i] > 0]
    sums2: list[list[float]] = [[0.0, 0.0] for _ in ts]
    if bounded:
        sub = [ts[i] for i in bounded]
        parts = []
        for b in _blocks(sub):
            rows = [bounded[r] for r in b.rows]
            rt = torch.tensor([rtol[i] for i in rows], dtype=torch.float64, device=b.x.device).unsqueeze(1)
            at = torch.tensor([atol[i] for i in rows], dtype=torch.float64, device=b.x.device).unsqueeze(1)
            r = torch.where(torch.isfinite(b.x), b.x, 0.0).abs()
            tau = at + rt * r
            parts.append((rows, torch.stack([(tau * tau).sum(1), (tau * (2.0 * r + tau)).square().sum(1)], dim=1)))
        sums2 = _gather(parts, len(ts), 2)
    for i in want:
        d = digests[i]
        digests[i] = Digest(d.d1, d.d2, d.a1, d.a2, d.nan, d.posinf, d.neginf, rms[i], math.sqrt(sums2[i][0]),
                            math.sqrt(sums2[i][1]))
    return digests


def digests_agree(ref: Digest, cand: Digest, exact: bool) -> tuple[bool, str]:
    """(agree, why not) for the digests of one leaf: non-finite counts equal, ``d1``/``d2`` within the
    bounds of the module docstring (plus float64 rounding, 1e-12 of the magnitudes)."""
    if (ref.nan, ref.posinf, ref.neginf) != (cand.nan, cand.posinf, cand.neginf):
        return False, (f"NaN/+Inf/-Inf counts {cand.nan}/{cand.posinf}/{cand.neginf}, the reference has "
                       f"{ref.nan}/{ref.posinf}/{ref.neginf}")
    s1 = 0.0 if exact else (ref.s1 or 0.0)
    s2 = 0.0 if exact else (ref.s2 or 0.0)
    e1 = 1e-12 * (ref.a1 + cand.a1) + 1e-300
    e2 = 1e-12 * (ref.a2 + cand.a2) + 1e-300
    for name, r, c, s, e in (("d1", ref.d1, cand.d1, s1, e1), ("d2", ref.d2, cand.d2, s2, e2)):
        if not (math.isfinite(c) and abs(c - r) <= SIGMAS * s + e):
            return False, (f"digest {name} differs by {abs(c - r):.4g}, over {SIGMAS:g} x {s:.4g} (the largest "
                           "difference outputs within tolerance give with probability 1 - 3e-8)")
    return True, ""
