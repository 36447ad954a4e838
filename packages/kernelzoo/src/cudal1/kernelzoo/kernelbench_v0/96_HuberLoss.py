"""KernelBench level 1, 96_HuberLoss (predictions, targets: (128, 4096) fp32; ``smooth_l1_loss(p, t)``: beta
1, mean -> scalar).

Per element ``z = |p - t|``, ``0.5 * z * z`` where ``z < 1`` else ``z - 0.5`` (torch's formula with beta = 1:
a NaN takes the second branch and stays NaN), summed in fp32. One Triton launch: each of P programs (P <=
1024; 128 here, one 4096-element block each) sums its contiguous span and stores the partial; after a thread
barrier it bumps an arrival counter (``atomic_add``, acq_rel, GPU scope); the program that arrives last loads
the P partials (bypassing L1), sums them in a fixed order, writes ``sum / n`` and resets the counter to zero.
Partials and counter are per (device, stream) (``fast_launch.ReductionScratch``); the launch goes through
``fast_launch.FastLaunch`` (the compiled kernel's launcher, far less host time than ``kernel[grid]``). Each
call: one output ``torch.empty``, one launch.

Eager's smooth_l1_loss runs its elementwise kernel and the mean, nearly all host time. One allocation and one
launch cost about what a single eager op costs in this harness (the floor is the two synchronisations and the
launch latency).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.fast_launch import FastLaunch, ReductionScratch

BLOCK = 4096
MAX_PARTS = 1024


@triton.jit
def _huber_kernel(p_ptr, t_ptr, out_ptr, part_ptr, count_ptr, n, span, inv_n, BLOCK: tl.constexpr,
                PARTS: tl.constexpr):
    pid = tl.program_id(0)
    base = pid.to(tl.int64) * span
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, span, BLOCK):
        offs = base + off + tl.arange(0, BLOCK)
        mask = offs < n
        p = tl.load(p_ptr + offs, mask=mask, other=0.0)
        t = tl.load(t_ptr + offs, mask=mask, other=0.0)
        z = tl.abs(p - t)
        acc += tl.where(z < 1.0, 0.5 * z * z, z - 0.5)
    tl.store(part_ptr + pid, tl.sum(acc, 0))
    tl.debug_barrier()  # every thread's part of the store is done before the counter says so
    arrived = tl.atomic_add(count_ptr, 1, sem="acq_rel")
    if arrived == tl.num_programs(0) - 1:
        i = tl.arange(0, PARTS)
        parts = tl.load(part_ptr + i, mask=i < tl.num_programs(0), other=0.0, cache_modifier=".cg")
        tl.store(out_ptr, tl.sum(parts, 0) * inv_n)
        tl.store(count_ptr, 0)


_LAUNCH = FastLaunch(_huber_kernel, BLOCK=BLOCK, PARTS=MAX_PARTS, num_warps=8)
_SCRATCH = ReductionScratch(MAX_PARTS)


def huber_mean(p: torch.Tensor, t: torch.Tensor, max_parts: int = MAX_PARTS) -> torch.Tensor:
    """``smooth_l1_loss(p, t)`` (beta 1, mean) of two contiguous float32 tensors of one shape and n > 0
    elements, 0-d, one launch (GPU, or Triton's interpreter on CPU). ``max_parts`` (<= 1024): most programs
    (tests use fewer, to make each loop over several blocks)."""
    n = p.numel()
    out = p.new_empty(())  # float32, p's device
    parts = min((n + BLOCK - 1) // BLOCK, max_parts)  # not triton.cdiv: a ConstexprFunction, us a call
    span = ((n + parts - 1) // parts + BLOCK - 1) // BLOCK * BLOCK
    partials, counter = _SCRATCH.get(p)
    _LAUNCH(((n + span - 1) // span,), p, t, out, partials, counter, n, span, 1.0 / n)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p, t = predictions, targets
        if (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.shape == t.shape
                and p.numel() > 0):
            return huber_mean(p.contiguous(), t.contiguous())
        return torch.nn.functional.smooth_l1_loss(p, t)
