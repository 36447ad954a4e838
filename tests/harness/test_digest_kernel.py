"""The one-pass GPU digest (:mod:`cudal1.harness.digest_kernel`): it sums what the PyTorch path sums (run by
Triton's interpreter here, on small rows), and one compiled kernel serves every seed and position, so a fresh
candidate process never compiles a new variant in the middle of its timed batches."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SEEDS = (0x1234567890ABCDEF, 0xFFFFFFF0FFFFFFF0, 16, 1)  # halves past 2**31, multiples of 16, 1 and 0


def test_the_gpu_digest_kernel_sums_what_the_pytorch_path_sums():
    """The same signs for the same positions and seed, sums within float32 rounding (float64: float64 rounding),
    whatever the seed's halves and the first position (past 2**32 the positions wrap, as on the PyTorch path)."""
    code = f"""
import torch
from cudal1.harness import digest as D, digest_kernel as K
torch.manual_seed(0)
worst = {{}}
for dt in (torch.float32, torch.float64):
    for seed in {SEEDS!r}:
        for lo in (7, 0, 2**32 + 48):
            x = (torch.randn(3, 5000) * 3 + 0.5).to(dt)
            got = K.row_sums(x, lo, seed)
            w, u = D.weight_signs(lo, 5000, seed, "cpu", dt)
            y, y2 = x.abs(), x * x
            want = torch.stack([(x * w).sum(1), (y2 * u).sum(1), y.sum(1), y2.sum(1), (y2 * y).sum(1),
                                (y2 * y2).sum(1)], 1)
            scale = torch.stack([y.sum(1), y2.sum(1), y.sum(1), y2.sum(1), (y2 * y).sum(1), (y2 * y2).sum(1)],
                                1).double()
            worst[str(dt)] = max(worst.get(str(dt), 0.0), float(((got - want.double()).abs() / scale).max()))
print(worst)
assert worst["torch.float32"] < 1e-6 and worst["torch.float64"] < 1e-12, worst
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]


def test_seeds_and_positions_reach_the_kernel_as_one_class_of_argument(monkeypatch):
    """Triton compiles a variant per class of an integer argument's value (32- or 64-bit, divisible by 16, equal
    to 1): the seed halves and the first position are not specialised and always arrive as 64-bit values of the
    same class, so every seed and position runs the kernel compiled first."""
    torch = pytest.importorskip("torch")
    K = pytest.importorskip("cudal1.harness.digest_kernel")
    # the kernel as Triton compiles it (not its interpreter, which the kernel zoo's tests switch on for the session)
    code = ("from cudal1.harness import digest_kernel as K; "
            "print(sorted(p.name for p in K._digest_sums_kernel.params if p.do_not_specialize))")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split("\n")[-2] == "['lo', 's1', 's2']"  # m and nblocks keep their aligned loads
    launched = []

    class Spy:
        def __getitem__(self, grid):
            return lambda *args, **kw: launched.append(args[3:6])

    monkeypatch.setattr(K, "_digest_sums_kernel", Spy())
    for seed in SEEDS:
        for lo in (0, 1, 16, 2**31, 2**32 + 48):
            K.row_sums(torch.ones(2, 100), lo, seed)
    assert len(launched) == len(SEEDS) * 5
    assert all(2**32 <= v < 2**33 for args in launched for v in args), launched
