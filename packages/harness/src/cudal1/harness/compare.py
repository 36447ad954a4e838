"""Output comparison: structure, NaN/Inf parity and per-dtype tolerances.

Tolerances (elementwise ``|cand - ref| <= atol + rtol * |ref|``; ``atol`` scales with the reference's
RMS so that values near zero after cancellation are judged against the output's magnitude):

=========  ======  =====================
dtype      rtol    atol (x rms(ref))
=========  ======  =====================
float64    1e-7    1e-7
float32    1e-4    1e-4
float16    1e-2    1e-2
bfloat16   2e-2    2e-2
integers   exact   exact
bool       exact   exact
=========  ======  =====================

fp32 tasks are held to fp32: computing them in TF32, fp16 or bf16 gives errors of 1e-3 and more and
fails this check. Reported errors: ``max_abs_err`` = max |cand - ref|; ``max_rel_err`` = max of
|cand - ref| / (atol + rtol * |ref|) * rtol, i.e. the relative error where it is judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}


CHUNK = 1 << 26  # elements compared at a time: bounds the temporaries to a few hundred MB


def tolerance_for(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol_scale) for an output dtype; (0, 0) means exact comparison."""
    return TOLERANCES.get(dtype, (0.0, 0.0))


@dataclass(frozen=True)
class Tolerance:
    """The tolerance one output tensor is judged with: ``|cand - ref| <= atol + rtol * |ref|``.

    ``atol`` is absolute when given (a user override), else ``atol_scale`` x the reference's RMS."""

    rtol: float
    atol_scale: float
    atol: float | None = None

    def atol_at(self, rms: float) -> float:
        """The absolute tolerance for a reference output whose finite values have this RMS."""
        return self.atol if self.atol is not None else self.atol_scale * max(rms, 1e-30)

    @property
    def exact(self) -> bool:
        return self.rtol == 0.0 and self.atol_scale == 0.0 and not self.atol


def resolve_tolerance(dtype: torch.dtype, rtol: float | None = None, atol: float | None = None) -> Tolerance:
    """The :class:`Tolerance` of an output dtype, with optional overrides (``EvalConfig.rtol`` / ``atol``)."""
    d_rtol, d_scale = tolerance_for(dtype)
    exact = not (dtype.is_floating_point or dtype.is_complex)
    if exact:
        return Tolerance(0.0, 0.0, None)
    return Tolerance(d_rtol if rtol is None else rtol, d_scale, atol)


@dataclass
class Comparison:
    """Outcome of comparing one candidate output with one reference output."""

    ok: bool
    reason: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    rtol: float = 0.0
    atol: float = 0.0


def flatten_outputs(out: Any) -> list[Any]:
    """A model's output as a flat list: a tensor, or a tuple/list of tensors (nested allowed)."""
    if isinstance(out, (tuple, list)):
        flat: list[Any] = []
        for o in out:
            flat.extend(flatten_outputs(o))
        return flat
    return [out]


def compare_tensor(
    cand: Any, ref: torch.Tensor, *, rtol: float | None = None, atol: float | None = None, where: str = "output",
    ref_rms: float | None = None,
) -> Comparison:
    """Compare one candidate tensor with the reference tensor.

    Checks in order: exact type ``torch.Tensor`` (no subclass), shape, dtype, device, NaN/Inf parity,
    then values within tolerance. ``rtol``/``atol`` override the per-dtype defaults. ``ref_rms``: the RMS of
    the whole reference output when ``ref`` holds samples of it (the default atol scales with it).
    """
    if type(cand) is not torch.Tensor:
        return Comparison(False, f"{where} is {type(cand).__name__}, expected an exact torch.Tensor")
    if cand.shape != ref.shape:
        return Comparison(False, f"{where} has shape {tuple(cand.shape)}, expected {tuple(ref.shape)}")
    if cand.dtype != ref.dtype:
        return Comparison(False, f"{where} has dtype {cand.dtype}, expected {ref.dtype}")
    if cand.device != ref.device:
        return Comparison(False, f"{where} is on {cand.device}, expected {ref.device}")
    d_rtol, d_atol_scale = tolerance_for(ref.dtype)
    rtol = d_rtol if rtol is None else rtol
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        eq = torch.equal(cand, ref)
        n_bad = 0 if eq else int((cand != ref).sum().item())
        return Comparison(eq, "" if eq else f"{where}: {n_bad} of {ref.numel()} elements differ (exact dtype)")
    if cand.numel() > 0 and cand.data_ptr() == 0:
        return Comparison(False, f"{where} has no storage (lazy or fake tensor)")
    if torch.equal(cand, ref):  # bit-identical (NaN positions aside): no need to measure errors
        atol0 = 0.0 if atol is None else atol
        return Comparison(True, "", 0.0, 0.0, rtol, atol0)
    wide = torch.float64 if ref.dtype == torch.float64 else torch.float32
    c_all = cand.detach().reshape(-1)
    r_all = ref.detach().reshape(-1)
    n = r_all.numel()
    # pass 1: NaN/Inf parity and the reference's RMS over finite values (no syncs inside the loop)
    dev = r_all.device
    bad_nan = torch.zeros((), dtype=torch.bool, device=dev)
    bad_inf = torch.zeros((), dtype=torch.bool, device=dev)
    sq = torch.zeros((), dtype=torch.float64, device=dev)
    cnt = torch.zeros((), dtype=torch.int64, device=dev)
    for lo in range(0, n, CHUNK):
        c = c_all[lo : lo + CHUNK].to(wide)
        r = r_all[lo : lo + CHUNK].to(wide)
        bad_nan |= (torch.isnan(c) != torch.isnan(r)).any()
        c_inf, r_inf = torch.isinf(c), torch.isinf(r)
        bad_inf |= ((c_inf | r_inf) & (c != r)).any()
        fin = torch.isfinite(r)
        sq += torch.where(fin, r, 0).square().sum(dtype=torch.float64)
        cnt += fin.sum()
    if bool(bad_nan):
        return Comparison(False, f"{where}: NaN where the reference has none, or none where it has NaN")
    if bool(bad_inf):
        return Comparison(False, f"{where}: Inf where the reference has none (or of the other sign)")
    count = int(cnt)
    if count == 0:
        return Comparison(True, rtol=rtol)
    rms = (float(sq) / count) ** 0.5 if ref_rms is None else ref_rms
    atol = d_atol_scale * max(rms, 1e-30) if atol is None else atol
    # pass 2: errors against the tolerance (non-finite reference positions were matched exactly above)
    max_abs = torch.zeros((), dtype=wide, device=dev)
    worst = torch.zeros((), dtype=wide, device=dev)
    n_bad = torch.zeros((), dtype=torch.int64, device=dev)
    worst_at = torch.zeros((), dtype=torch.int64, device=dev)
    for lo in range(0, n, CHUNK):
        c = c_all[lo : lo + CHUNK].to(wide)
        r = r_all[lo : lo + CHUNK].to(wide)
        fin = torch.isfinite(r)
        diff = torch.where(fin, (c - r).abs(), 0)
        ratio = diff / (atol + rtol * r.abs().nan_to_num(0.0, 0.0, 0.0))
        w, i = ratio.max(0)
        better = w > worst
        worst_at = torch.where(better, i + lo, worst_at)
        worst = torch.maximum(worst, w)
        max_abs = torch.maximum(max_abs, diff.max())
        n_bad += (ratio > 1.0).sum()
    worst_f, max_abs_f = float(worst), float(max_abs)
    max_rel = worst_f * rtol if rtol > 0 else 0.0
    if worst_f > 1.0:
        at = int(worst_at)
        return Comparison(
            False,
            f"{where}: {int(n_bad)} of {count} elements outside tolerance (rtol={rtol:g}, atol={atol:.3g}); "
            f"worst: got {float(c_all[at]):.6g}, expected {float(r_all[at]):.6g}; max abs err {max_abs_f:.3g}",
            max_abs_f,
            max_rel,
            rtol,
            atol,
        )
    return Comparison(True, "", max_abs_f, max_rel, rtol, atol)


def compare_outputs(cand: Any, ref: Any, *, rtol: float | None = None, atol: float | None = None) -> Comparison:
    """Compare a candidate's whole output (tensor or nested tuple/list of tensors) with the reference's."""
    c_flat, r_flat = flatten_outputs(cand), flatten_outputs(ref)
    if len(c_flat) != len(r_flat):
        return Comparison(False, f"output has {len(c_flat)} tensors, expected {len(r_flat)}")
    worst = Comparison(True)
    for i, (c, r) in enumerate(zip(c_flat, r_flat, strict=True)):
        where = "output" if len(r_flat) == 1 else f"output[{i}]"
        if not isinstance(r, torch.Tensor):
            if c != r:
                return Comparison(False, f"{where} is {c!r}, expected {r!r}")
            continue
        cmp = compare_tensor(c, r, rtol=rtol, atol=atol, where=where)
        if not cmp.ok:
            return cmp
        worst = Comparison(
            True,
            "",
            max(worst.max_abs_err, cmp.max_abs_err),
            max(worst.max_rel_err, cmp.max_rel_err),
            cmp.rtol,
            cmp.atol,
        )
    return worst
