"""The digest's sums in one pass over an output on the GPU (Triton): what :func:`cudal1.harness.digest._power_sums`
computes with a dozen PyTorch kernels, in one read of the output.

On a GPU a timed batch's digests are on the parent's clock (:mod:`cudal1.harness.clockcheck`), and with PyTorch
kernels they cost about 13 passes over each output plus the weights' hash, many times the call of an elementwise
task (benchmarks/results/2026-11-29-harness-timing-h200.md), and the clock's resolution is a fraction of that. One
pass reads each value once and computes the signs in registers.

Each program sums :data:`BLOCK` consecutive values of one row in the output's precision (float32, or float64 for
float64 outputs); the per-block sums are added in float64 by the caller. The signs are the same function of the
position and the seed as :func:`cudal1.harness.digest.weight_signs` (a 32-bit mixer on int64 arithmetic, masked),
so the GPU and the PyTorch path give the same digest up to the sums' rounding.

One compiled kernel serves every seed and position: Triton would otherwise compile a variant per class of each
integer argument's value (32- or 64-bit, divisible by 16 or not), and a fresh candidate process met a new class at
a random batch of its timing rounds, a 350-520 ms compile inside the parent's clocked window
(benchmarks/results/2026-12-05-harness-timing-h200.md). The seed halves and the first position are therefore not
specialised (``do_not_specialize``) and always passed with bit 32 set (64-bit whatever their value), which the
kernel masks off.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096
_M = 0xFFFFFFFF


@triton.jit
def _fmix32(h):
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


#: added to the seed halves and the first position so that each is a 64-bit argument whatever its value (the
#: kernel works modulo 2**32: the positions are masked to 32 bits, the seed halves too)
_WIDE_ARG = 1 << 32


@triton.jit(do_not_specialize=["lo", "s1", "s2"])
def _digest_sums_kernel(x_ptr, out_ptr, m, lo, s1, s2, nblocks, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    b = tl.program_id(0)
    row = tl.program_id(1)
    offs = b * BLOCK + tl.arange(0, BLOCK)
    mask = offs < m
    x = tl.load(x_ptr + row.to(tl.int64) * m + offs, mask=mask, other=0.0)
    if WIDE:
        x = x.to(tl.float64)
    else:
        x = x.to(tl.float32)
    pos = (lo + offs.to(tl.int64)) & 0xFFFFFFFF
    h = _fmix32(_fmix32(pos ^ (s1 & 0xFFFFFFFF)) ^ (s2 & 0xFFFFFFFF))
    w = (1 - 2 * (h & 1)).to(x.dtype)
    u = (1 - 2 * ((h >> 1) & 1)).to(x.dtype)
    y = tl.abs(x)
    y2 = x * x
    base = out_ptr + (row.to(tl.int64) * nblocks + b) * 6
    tl.store(base + 0, tl.sum(x * w, axis=0))
    tl.store(base + 1, tl.sum(y2 * u, axis=0))
    tl.store(base + 2, tl.sum(y, axis=0))
    tl.store(base + 3, tl.sum(y2, axis=0))
    tl.store(base + 4, tl.sum(y2 * y, axis=0))
    tl.store(base + 5, tl.sum(y2 * y2, axis=0))


def row_sums(x: torch.Tensor, lo: int, seed: int) -> torch.Tensor:
    """``[k, 6]`` float64 sums ``d1, d2, S1..S4`` of each row of ``x`` (``[k, m]``, contiguous, float32 or float64,
    positions ``lo .. lo+m-1`` of their outputs), under ``seed``."""
    x = x.contiguous()
    k, m = x.shape
    nblocks = max(triton.cdiv(m, BLOCK), 1)
    part = torch.empty(k, nblocks, 6, dtype=x.dtype, device=x.device)
    if m == 0:
        return torch.zeros(k, 6, dtype=torch.float64, device=x.device)
    _digest_sums_kernel[(nblocks, k)](x, part, m, _WIDE_ARG + (lo & _M), _WIDE_ARG + (seed & _M),
                                      _WIDE_ARG + ((seed >> 32) & _M), nblocks, BLOCK=BLOCK,
                                      WIDE=x.dtype == torch.float64)
    return part.to(torch.float64).sum(1)
