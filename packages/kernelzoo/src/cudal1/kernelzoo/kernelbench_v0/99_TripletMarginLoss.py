"""KernelBench level 1, 99_TripletMarginLoss (anchor, positive, negative: (128, 4096) fp32;
``nn.TripletMarginLoss(margin)``: p 2, eps 1e-6, no swap, mean -> scalar).

Two Triton kernels inside one CUDA graph (``blocks.cudagraph.CUDAGraphForward``): the first, one program per
row, accumulates both squared distances ``||a - p + eps||^2`` and ``||a - n + eps||^2`` (pairwise_distance adds
eps to the difference) in fp32 lanes in one pass over the three rows, and writes the row's
``max(margin + d(a, p) - d(a, n), 0)`` (with ``swap``, d(a, n) is replaced by min(d(a, n), d(p, n))); the second
sums the 128 row values in one program and scales by 1/N (``sum`` reduction: by 1). Each call is one copy of the
three inputs (one ``_foreach_copy_``), one graph replay and one scalar clone. Other p-norms and ``none`` reduction
keep the module (inside the graph as well).

Eager runs two pairwise_distance (sub, add eps, norm each), then add, sub, clamp and mean: about ten launches
with four (128, 4096) temporaries. The earlier version (the zoo's per-row op + a torch mean, two bare launches)
was rejected ``timing_disagrees`` (launch-bound): in the harness's worker a Triton launch from Python costs
several eager launches' worth of host time. The graph costs about three eager launches (copy, replay, clone) plus
a 6 MB input copy on the GPU.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _triplet_rows_kernel(a_ptr, p_ptr, n_ptr, out_ptr, n_cols, margin, eps, SWAP: tl.constexpr,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    acc_p = tl.zeros([BLOCK], tl.float32)
    acc_n = tl.zeros([BLOCK], tl.float32)
    acc_s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        a = tl.load(a_ptr + base + cols, mask=mask, other=0.0)
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0)
        n = tl.load(n_ptr + base + cols, mask=mask, other=0.0)
        dp = a - p + eps
        dn = a - n + eps
        acc_p += tl.where(mask, dp * dp, 0.0)  # masked lanes would add eps^2
        acc_n += tl.where(mask, dn * dn, 0.0)
        if SWAP:
            ds = p - n + eps
            acc_s += tl.where(mask, ds * ds, 0.0)
    d_ap = tl.sqrt(tl.sum(acc_p, 0))
    d_an = tl.sqrt(tl.sum(acc_n, 0))
    if SWAP:
        d_an = tl.minimum(d_an, tl.sqrt(tl.sum(acc_s, 0)))
    tl.store(out_ptr + row, tl.maximum(margin + d_ap - d_an, 0.0))


@triton.jit
def _sum_scaled_kernel(part_ptr, out_ptr, n_part, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_part, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < n_part, other=0.0)
    tl.store(out_ptr, tl.sum(acc, 0) * scale)


def triplet_loss_reduced(a: torch.Tensor, p: torch.Tensor, n: torch.Tensor, margin: float, eps: float,
                         swap: bool, mean: bool) -> torch.Tensor:
    """Mean (or sum) triplet margin loss (L2) over the rows of contiguous float32 (rows, d) tensors, 0-d."""
    rows, d = a.shape
    per_row = torch.empty(rows, device=a.device, dtype=torch.float32)
    out = torch.empty((), device=a.device, dtype=torch.float32)
    block = min(4096, max(16, triton.next_power_of_2(d)))
    _triplet_rows_kernel[(rows,)](a, p, n, per_row, d, margin, eps, SWAP=swap, BLOCK=block,
                                  num_warps=8 if block >= 2048 else 4)
    fin = min(1024, max(16, triton.next_power_of_2(rows)))
    _sum_scaled_kernel[(1,)](per_row, out, rows, 1.0 / rows if mean else 1.0, BLOCK=fin, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)  # margin, p, eps, swap, reduction
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        fn = self.loss_fn
        a, p, n = anchor, positive, negative
        if (a.is_cuda and fn.p == 2 and fn.reduction in ("mean", "sum") and a.dim() == 2 and a.shape[0] > 0
                and all(v.dtype == torch.float32 and v.shape == a.shape for v in (a, p, n))):
            return triplet_loss_reduced(a.contiguous(), p.contiguous(), n.contiguous(), float(fn.margin),
                                        float(fn.eps), bool(fn.swap), fn.reduction == "mean")
        return fn(a, p, n)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self._graph(anchor, positive, negative)
