"""KernelBench level 1, 95_CrossEntropyLoss (predictions: (4096, 10) fp32 logits, targets: (4096,) int64 class
indices; ``cross_entropy(predictions, targets)``: mean over the rows whose target is not ignore_index -100).

One Triton launch. Each of P programs (P <= 1024; 32 here, one block of 128 rows each) loads (rows, 16) tiles
of logits (masked columns -inf), computes per row ``log(sum exp(x - max)) + max - x[target]`` in fp32 (torch's
log_softmax, then the picked entry negated), gathers ``x[target]`` with one load per row, and stores two
partials: the sum of its rows' losses and the number of rows counted (target != -100). After a thread barrier
it bumps an arrival counter (``atomic_add``, acq_rel, GPU scope); the program that arrives last loads both
partial vectors (bypassing L1), sums each in a fixed order, writes ``loss_sum / count`` (0 / 0 = NaN when
every target is ignored, as eager) and resets the counter to zero. Partials and counter are per (device,
stream) (``fast_launch.ReductionScratch``); the launch goes through ``fast_launch.FastLaunch`` (the compiled
kernel's launcher: far less host time than ``kernel[grid]``). Targets outside [0, C) other
than -100 are not checked (eager raises a device-side assert). Inputs other than 2-D logits with 1-D int64
targets, or more than 2048 classes, run ``cross_entropy``.

Eager runs log_softmax and nll_loss: two launches, nearly all host time. An earlier version was slower than
eager. One allocation and one launch cost about what a single eager op costs in this harness (the floor is the
two synchronisations and the launch latency).

History: one harness run rejected it timing_disagrees (the parent's clock saw more time per call around the
batches than the candidate's own timing: the clock check's false rejection of launch-bound code, seen before),
while the probe in the same call had it ahead of eager. Re-measured with the lanes pinned, it was rejected
reference_drift (the reference ran slower beside it than alone), and its raw speedup was at parity with eager, not
reliably above it, so it was withdrawn to ``pending/`` and counts as unsolved. Measured again with the harness's
drift re-check, it was verified slightly above eager; it stays pending until a further run confirms it above
parity.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.fast_launch import FastLaunch, ReductionScratch

MAX_PARTS = 1024
MAX_CLASSES = 2048
TILE = 2048  # logits a program holds per row block: ROWS * CBLOCK
IGNORE_INDEX = -100


@triton.jit
def _cross_entropy_kernel(x_ptr, t_ptr, out_ptr, part_ptr, count_ptr, rows, C, ignore_index,
                          ROWS: tl.constexpr, CBLOCK: tl.constexpr, PARTS: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    c = tl.arange(0, CBLOCK)
    loss_acc = tl.zeros([ROWS], tl.float32)
    cnt_acc = tl.zeros([ROWS], tl.float32)
    for first in range(pid * ROWS, rows, nprog * ROWS):  # row blocks pid, pid + P, ...
        r = first + tl.arange(0, ROWS).to(tl.int64)
        rmask = r < rows
        x = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=rmask[:, None] & (c < C)[None, :],
                    other=-float("inf"))
        mx = tl.where(rmask, tl.max(x, 1), 0.0)
        lse = tl.log(tl.where(rmask, tl.sum(tl.exp(x - mx[:, None]), 1), 1.0)) + mx
        tgt = tl.load(t_ptr + r, mask=rmask, other=ignore_index)
        valid = rmask & (tgt != ignore_index)
        picked = tl.load(x_ptr + r * C + tgt, mask=valid, other=0.0)
        loss_acc += tl.where(valid, lse - picked, 0.0)
        cnt_acc += valid.to(tl.float32)
    tl.store(part_ptr + pid, tl.sum(loss_acc, 0))
    tl.store(part_ptr + PARTS + pid, tl.sum(cnt_acc, 0))
    tl.debug_barrier()  # every thread's part of the stores is done before the counter says so
    arrived = tl.atomic_add(count_ptr, 1, sem="acq_rel")
    if arrived == nprog - 1:
        i = tl.arange(0, PARTS)
        live = i < nprog
        loss = tl.load(part_ptr + i, mask=live, other=0.0, cache_modifier=".cg")
        cnt = tl.load(part_ptr + PARTS + i, mask=live, other=0.0, cache_modifier=".cg")
        tl.store(out_ptr, tl.sum(loss, 0) / tl.sum(cnt, 0))
        tl.store(count_ptr, 0)


def _handle(cblock: int) -> FastLaunch:
    return FastLaunch(_cross_entropy_kernel, ROWS=max(1, TILE // cblock), CBLOCK=cblock, PARTS=MAX_PARTS,
                      num_warps=4)


_LAUNCH = {1 << k: _handle(1 << k) for k in range(4, MAX_CLASSES.bit_length())}
_SCRATCH = ReductionScratch(2 * MAX_PARTS)


def cross_entropy_mean(x: torch.Tensor, t: torch.Tensor, max_parts: int = MAX_PARTS) -> torch.Tensor:
    """``cross_entropy(x, t)`` (mean, ignore_index -100) of contiguous float32 logits (rows, C), 0 < C <=
    2048, rows > 0, and contiguous int64 targets (rows,); 0-d, one launch (GPU, or Triton's interpreter on
    CPU). ``max_parts`` (<= 1024): most programs (tests use fewer, to make each loop over several row
    blocks)."""
    rows, c = x.shape
    launch = _LAUNCH[max(16, 1 << (c - 1).bit_length())]  # not triton.next_power_of_2 (us a call)
    block_rows = launch.constexprs["ROWS"]
    grid = min((rows + block_rows - 1) // block_rows, max_parts)
    out = x.new_empty(())  # float32, x's device
    partials, counter = _SCRATCH.get(x)
    launch((grid,), x, t, out, partials, counter, rows, c, IGNORE_INDEX)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x, t = predictions, targets
        if (x.is_cuda and x.dtype == torch.float32 and t.dtype == torch.int64 and x.dim() == 2
                and t.dim() == 1 and 0 < x.shape[1] <= MAX_CLASSES and 0 < t.shape[0] == x.shape[0]):
            return cross_entropy_mean(x.contiguous(), t.contiguous())
        return torch.nn.functional.cross_entropy(x, t)
