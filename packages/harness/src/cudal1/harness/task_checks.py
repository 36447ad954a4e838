"""Task-level checks: is the task's output constant, independent of an input, or of a weight?

A task whose output ignores its input (or a weight) lets a candidate "win" by returning a constant or by
skipping work that cannot matter; its speedup means nothing. The harness checks every task before the
candidate is loaded; results on a degenerate task carry ``task_degenerate`` and are left out of
aggregate speedups. ``cudal1-eval --check-suite`` runs only these checks over a suite.

Checks (the reference in eval mode, under no_grad, parameters randomised as for evaluation):
  * constant output: two input draws give the same output;
  * independent of input i: redrawing only input i leaves the output unchanged (tensor inputs);
  * independent of parameter p: redrawing only parameter/buffer p leaves the output unchanged.
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


def _same(a: Any, b: Any) -> bool:
    fa, fb = flatten_outputs(a), flatten_outputs(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb, strict=True):
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            if x != y:
                return False
            continue
        if x.shape != y.shape:
            return False
        if not x.dtype.is_floating_point:
            if not torch.equal(x, y):
                return False
            continue
        x64, y64 = x.double(), y.double()
        fin = torch.isfinite(x64) & torch.isfinite(y64)
        if not torch.equal(torch.isfinite(x64), torch.isfinite(y64)):
            return False
        if fin.any():
            scale = float(x64[fin].square().mean().sqrt().item())
            if float((x64[fin] - y64[fin]).abs().max().item()) > SAME_RTOL * max(scale, 1e-30):
                return False
    return True


def check_task(
    reference: nn.Module, make_inputs: Callable[[int], list[Any]], seed: int, *, check_params: bool = True
) -> dict[str, Any]:
    """Run the checks; return ``{"degenerate": bool, "findings": [str, ...]}``.

    ``make_inputs(seed)`` draws one input set (the task's own ``get_inputs`` on the device).
    """
    findings: list[str] = []
    with torch.no_grad():
        a = make_inputs(seed + 11)
        b = make_inputs(seed + 12)
        out_a = reference(*a)
        if _same(out_a, reference(*b)):
            findings.append("output is the same for two different input draws (constant output)")
        else:
            for i, x in enumerate(a):
                if not isinstance(x, torch.Tensor) or x.numel() == 0:
                    continue
                mixed = list(a)
                mixed[i] = b[i]
                if _same(out_a, reference(*mixed)):
                    findings.append(f"output does not depend on input {i}")
        if check_params:
            named = [(n, t) for n, t in list(reference.named_parameters()) + list(reference.named_buffers())
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
                    if _same(out_a, reference(*a)):
                        findings.append(f"output does not depend on parameter {name}")
                finally:
                    t.copy_(saved)
    return {"degenerate": bool(findings), "findings": findings}
