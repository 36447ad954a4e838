"""Output digests and samples: how the parent checks outputs it does not copy in full.

An output tensor leaf of N elements is observed by the parent through

* **samples**: every element when N <= :data:`FULL_MAX`, else the first and last :data:`EDGE` elements plus
  :data:`RANDOM_SAMPLES` positions drawn from a seed the parent chooses *after* the output exists. Both
  workers gather the same positions; the parent compares them elementwise with the task's tolerance.
* **a digest**: ``d1 = sum(w_i * x_i)`` and ``d2 = sum(u_i * x_i**2)`` in float64 over the finite values,
  with ``w_i, u_i`` in {-1, +1} from a keyed hash of the position and a parent-chosen seed, plus the counts
  of NaN, +Inf and -Inf. Computing ``d2`` needs every element of the output (a cheaper route to it, as
  ``w^T A x`` is for ``d1`` of a matrix product, does not exist in general), so a batch whose digests are
  on the parent's clock has computed its outputs on that clock.

The reference worker also sends ``s1 = sqrt(sum tau_i^2)`` and ``s2 = sqrt(sum tau_i^2 (2|r_i| + tau_i)^2)``,
``tau_i = atol + rtol |r_i|``: if every candidate element is within tolerance, ``|d1_c - d1_r|`` and
``|d2_c - d2_r|`` are sums of independent +-1-weighted terms bounded by ``tau_i`` and ``tau_i (2|r_i| +
tau_i)``, so by Hoeffding's inequality they exceed :data:`SIGMAS` times ``s1``/``s2`` with probability under
2 exp(-SIGMAS^2 / 2) (about 3e-8). Larger differences mean the outputs differ beyond tolerance.

The hash is computed with int64 tensor arithmetic, identically on the CPU and on CUDA, so the parent can
recompute a digest of an output it received in full.
"""

from __future__ import annotations

import math
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
    flat = t.detach().reshape(-1)
    n = flat.numel()
    dev = flat.device
    is_float = flat.dtype.is_floating_point or flat.dtype.is_complex
    acc = torch.zeros(4, dtype=torch.float64, device=dev)  # d1, d2, a1, a2
    cnt = torch.zeros(3, dtype=torch.int64, device=dev)
    sq = torch.zeros((), dtype=torch.float64, device=dev)
    nfin = torch.zeros((), dtype=torch.int64, device=dev)
    for lo in range(0, n, CHUNK):
        x = flat[lo : lo + CHUNK]
        if flat.dtype.is_complex:
            x = torch.view_as_real(x).reshape(-1)
        x = x.to(torch.float64)
        if is_float:
            nan = torch.isnan(x)
            pinf = torch.isposinf(x)
            ninf = torch.isneginf(x)
            cnt += torch.stack([nan.sum(), pinf.sum(), ninf.sum()])
            fin = ~(nan | pinf | ninf)
            x = torch.where(fin, x, 0.0)
            nfin += fin.sum()
        h = position_hash(lo, x.numel(), seed, dev)
        w = 1.0 - 2.0 * (h & 1).to(torch.float64)
        u = 1.0 - 2.0 * ((h >> 1) & 1).to(torch.float64)
        x2 = x * x
        acc += torch.stack([(w * x).sum(), (u * x2).sum(), x.abs().sum(), x2.sum()])
        sq += x2.sum()
    d1, d2, a1, a2 = (float(v) for v in acc.tolist())
    nan_c, pinf_c, ninf_c = (int(v) for v in cnt.tolist())
    if tolerance is None:
        return Digest(d1, d2, a1, a2, nan_c, pinf_c, ninf_c)
    count = int(nfin) if is_float else n
    rms = math.sqrt(float(sq) / count) if count else 0.0
    rtol, atol = tolerance.rtol, tolerance.atol_at(rms)
    s1 = torch.zeros((), dtype=torch.float64, device=dev)
    s2 = torch.zeros((), dtype=torch.float64, device=dev)
    if rtol > 0 or atol > 0:
        for lo in range(0, n, CHUNK):
            r = flat[lo : lo + CHUNK]
            if flat.dtype.is_complex:
                r = torch.view_as_real(r).reshape(-1)
            r = r.to(torch.float64)
            r = torch.where(torch.isfinite(r), r, 0.0).abs()
            tau = atol + rtol * r
            s1 += (tau * tau).sum()
            s2 += (tau * (2.0 * r + tau)).square().sum()
    return Digest(d1, d2, a1, a2, nan_c, pinf_c, ninf_c, rms, math.sqrt(float(s1)), math.sqrt(float(s2)))


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
