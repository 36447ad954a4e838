"""Randomise the reference's parameters away from their default init and hand the same values to the
candidate.

Why: a candidate can be "correct" only because weights sit at their default init (LayerNorm weight = 1,
bias = 0, BatchNorm running stats = 0/1). The harness draws new values for every floating parameter and
buffer of the reference (seeded; the same values for every trial) and loads them into the candidate
with ``load_state_dict(strict=False)``.

Mapping: candidate entries are matched to reference entries first by name and shape, then the rest by
shape in order of appearance. A candidate that stores a parameter transformed (a scale folded into
conv weights at init, a transposed weight) receives the reference's raw values and must transform them
again in a ``load_state_dict`` post hook (``nn.Module.register_load_state_dict_post_hook``): that is
the documented contract.
"""

from __future__ import annotations

import torch
from torch import nn


def randomise_(model: nn.Module, seed: int) -> None:
    """Redraw every floating parameter and buffer of ``model`` in place, deterministically from ``seed``.

    Each tensor ``t`` becomes ``m + s * N(0, 1)`` with ``m`` = its current mean and
    ``s = max(std(t), 0.25 * |m|, 0.1)``, so constant inits (ones, zeros) move away from themselves while
    the scale of fan-in inits is kept; tensors that were non-negative stay non-negative (``abs``), so
    variances and scales stay valid.
    """
    gens: dict[torch.device, torch.Generator] = {}
    with torch.no_grad():
        for _name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.dtype.is_floating_point or t.numel() == 0:
                continue
            gen = gens.get(t.device)
            if gen is None:  # values drawn where the tensor lives: no host round trip for big weights
                gen = gens[t.device] = torch.Generator(device=t.device).manual_seed(seed)
            wide = torch.float64 if t.dtype == torch.float64 else torch.float32
            tw = t.detach().to(wide)
            m = float(tw.mean())
            sd = float(tw.std()) if t.numel() > 1 else 0.0
            s = max(sd, 0.25 * abs(m), 0.1)
            new = torch.randn(t.shape, generator=gen, dtype=wide, device=t.device).mul_(s).add_(m)
            if float(tw.min()) >= 0.0:
                new.abs_()
            t.copy_(new)


def map_state(reference: nn.Module, candidate: nn.Module) -> tuple[dict[str, torch.Tensor], list[str]]:
    """Build a state dict for ``candidate`` from ``reference``'s values.

    Matching, in order: same name and shape; then parameters to parameters and buffers to buffers by
    shape in order of appearance; then whatever is left by shape.

    Returns:
        (state, unmapped): ``state`` maps candidate keys to reference tensors; ``unmapped`` lists the
        reference keys with floating values that found no candidate entry.
    """
    ref_sd = {k: v for k, v in reference.state_dict().items() if v.dtype.is_floating_point}
    cand_sd = {k: v for k, v in candidate.state_dict().items() if v.dtype.is_floating_point}
    ref_params = {k for k, _ in reference.named_parameters()}
    cand_params = {k for k, _ in candidate.named_parameters()}
    state: dict[str, torch.Tensor] = {}
    rest_ref = list(ref_sd)
    for k, v in cand_sd.items():
        r = ref_sd.get(k)
        if r is not None and r.shape == v.shape:
            state[k] = r
            rest_ref.remove(k)

    def by_shape(same_kind: bool) -> None:
        for k, v in cand_sd.items():
            if k in state:
                continue
            for rk in rest_ref:
                kind_ok = (rk in ref_params) == (k in cand_params) or not same_kind
                if kind_ok and ref_sd[rk].shape == v.shape:
                    state[k] = ref_sd[rk]
                    rest_ref.remove(rk)
                    break

    by_shape(same_kind=True)
    by_shape(same_kind=False)
    return state, rest_ref


def share_parameters(reference: nn.Module, candidate: nn.Module) -> list[str]:
    """Load the reference's (randomised) values into the candidate; return unmapped reference keys."""
    state, unmapped = map_state(reference, candidate)
    if state:
        candidate.load_state_dict(state, strict=False)
    return unmapped
