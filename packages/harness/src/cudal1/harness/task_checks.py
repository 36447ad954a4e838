"""Task-level checks: is the task's output constant, independent of an input, or of a weight?

A task whose output ignores its input lets a candidate "win" by returning a constant or by skipping work
that cannot matter; its speedup means nothing. The harness checks every task (in the clean reference
process, before any candidate is loaded); results on a degenerate task carry ``task_degenerate`` and are
left out of aggregate speedups. ``cudal1-eval --check-suite`` runs only these checks over a suite.

Checks (the reference in eval mode, under no_grad, parameters randomised as for evaluation):
  * constant output: two input draws give the same output (degenerate);
  * independent of input i: redrawing only input i leaves the output unchanged (tensor inputs; degenerate);
  * independent of parameter p: redrawing only parameter p leaves the output unchanged. This is a *note*,
    not degeneracy: a deep network often has a parameter whose effect is below the threshold (a bias
    before a norm, a late layer of a large model), and candidates are still judged on their outputs.
    Buffers are not parameters (a causal mask registered as a buffer is not a weight) and are not checked.
"Unchanged" means every output tensor differs by at most 1e-5 x its RMS (exactly equal for integers):
ten times below the fp32 tolerance, so a candidate that ignores the input or weight would pass the
correctness check, and above the rounding noise of a term that cancels mathematically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .compare import flatten_outputs

MAX_PARAM_CHECKS = 64
#: "unchanged" = every element within SAME_RTOL x RMS of the output: ten times below the fp32 correctness
#: tolerance, above the rounding noise of a mathematically cancelled term (a bias before a norm).
SAME_RTOL = 1e-5


CHUNK = 1 << 24  #: elements compared at a time (bounds float64 temporaries; no boolean-mask indexing, whose
#: nonzero() index list would take 8 bytes x ndim per element: 48 GiB for a 6 GiB 4-D output)


def _same_tensor(x: torch.Tensor, y: torch.Tensor) -> bool:
    if x.shape != y.shape:
        return False
    if not x.dtype.is_floating_point:
        return torch.equal(x, y)
    fx, fy = x.detach().reshape(-1), y.detach().reshape(-1)
    sq = torch.zeros((), dtype=torch.float64, device=fx.device)
    worst = torch.zeros((), dtype=torch.float64, device=fx.device)
    parity = torch.zeros((), dtype=torch.bool, device=fx.device)
    for lo in range(0, fx.numel(), CHUNK):
        a = fx[lo : lo + CHUNK].double()
        b = fy[lo : lo + CHUNK].double()
        fa, fb = torch.isfinite(a), torch.isfinite(b)
        parity |= (fa != fb).any()
        both = fa & fb
        a0, b0 = torch.where(both, a, 0.0), torch.where(both, b, 0.0)
        sq += a0.square().sum()
        worst = torch.maximum(worst, (a0 - b0).abs().max())
    if bool(parity):
        return False
    scale = float(sq.sqrt()) / max(fx.numel(), 1) ** 0.5
    return float(worst) <= SAME_RTOL * max(scale, 1e-30)


def _same(a: Any, b: Any) -> bool:
    fa, fb = flatten_outputs(a), flatten_outputs(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb, strict=True):
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            if x != y:
                return False
            continue
        if not _same_tensor(x, y):
            return False
    return True


def check_task(
    reference: nn.Module, make_inputs: Callable[[int], list[Any]], seed: int, *, check_params: bool = True,
    before_call: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run the checks; return ``{"degenerate": bool, "findings": [str, ...], "notes": [str, ...]}``.

    ``make_inputs(seed)`` draws one input set (the task's own ``get_inputs`` on the device); ``before_call``
    runs before every call of the reference (a stateful reference is put back to its initial state there).
    ``findings`` make the task degenerate; ``notes`` (parameters without measurable effect) do not.
    """
    findings: list[str] = []
    notes: list[str] = []

    def call(args: list[Any]) -> Any:
        if before_call is not None:
            before_call()
        return reference(*args)

    with torch.no_grad():
        a = make_inputs(seed + 11)
        b = make_inputs(seed + 12)
        out_a = call(a)
        if _same(out_a, call(b)):
            findings.append("output is the same for two different input draws (constant output)")
        else:
            for i, x in enumerate(a):
                if not isinstance(x, torch.Tensor) or x.numel() == 0:
                    continue
                mixed = list(a)
                mixed[i] = b[i]
                if _same(out_a, call(mixed)):
                    findings.append(f"output does not depend on input {i}")
        if check_params:
            named = [(n, t) for n, t in reference.named_parameters()
                     if t.dtype.is_floating_point and t.numel() > 0][:MAX_PARAM_CHECKS]
            for name, t in named:
                saved = t.detach().clone()
                gen = torch.Generator(device=t.device).manual_seed(seed + 13)
                noise = torch.randn(t.shape, generator=gen, dtype=torch.float32, device=t.device).to(t.dtype)
                new = saved * 1.5 + noise * (saved.float().std().item() if t.numel() > 1 else 0.5) + 0.25
                if float(saved.min().item()) >= 0:
                    new = new.abs()
                t.copy_(new)
                try:
                    if _same(out_a, call(a)):
                        notes.append(f"output does not depend measurably on parameter {name}")
                finally:
                    t.copy_(saved)
    return {"degenerate": bool(findings), "findings": findings, "notes": notes}
