"""KernelBench level 1, 97_CosineSimilarityLoss (predictions, targets: (128, 4096) fp32;
``mean(1 - cosine_similarity(p, t, dim=1))`` -> scalar).

Two Triton kernels inside one CUDA graph (``blocks.cudagraph.CUDAGraphForward``): the first, one program per
row, accumulates the dot product and both squared norms in fp32 lanes in one pass over the two rows and writes
``1 - dot / (max(|p|, eps) * max(|t|, eps))`` (eps 1e-8, each norm clamped separately as ATen's
cosine_similarity does); the second sums the 128 row values in one program and scales by 1/N. Each call is one
copy of both inputs (one ``_foreach_copy_``), one graph replay and one scalar clone.

Eager's cosine_similarity runs two vector norms, two clamps, two broadcast divides (each a (128, 4096)
temporary), a product and a sum, then rsub and mean: about ten launches. The earlier bare-launch version (row
kernel + a torch sum) was rejected ``timing_disagrees`` (launch-bound): in the harness's worker a Triton launch
from Python costs several eager launches' worth of host time. The graph costs about three eager launches (copy,
replay, clone) plus a 4 MB input copy on the GPU.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _one_minus_cos_rows_kernel(p_ptr, t_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    dot = tl.zeros([BLOCK], tl.float32)
    pp = tl.zeros([BLOCK], tl.float32)
    tt = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0)
        t = tl.load(t_ptr + base + cols, mask=mask, other=0.0)
        dot += p * t
        pp += p * p
        tt += t * t
    np_ = tl.maximum(tl.sqrt(tl.sum(pp, 0)), eps)
    nt = tl.maximum(tl.sqrt(tl.sum(tt, 0)), eps)
    tl.store(out_ptr + row, 1.0 - tl.sum(dot, 0) / (np_ * nt))


@triton.jit
def _sum_scaled_kernel(part_ptr, out_ptr, n_part, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_part, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < n_part, other=0.0)
    tl.store(out_ptr, tl.sum(acc, 0) * scale)


def cosine_loss_mean(p: torch.Tensor, t: torch.Tensor, eps: float) -> torch.Tensor:
    """``mean(1 - cos(p_i, t_i))`` over the rows of contiguous float32 (rows, n) tensors, 0-d."""
    rows, n = p.shape
    per_row = torch.empty(rows, device=p.device, dtype=torch.float32)
    out = torch.empty((), device=p.device, dtype=torch.float32)
    block = min(4096, max(16, triton.next_power_of_2(n)))
    _one_minus_cos_rows_kernel[(rows,)](p, t, per_row, n, eps, BLOCK=block, num_warps=8 if block >= 2048 else 4)
    fin = min(1024, max(16, triton.next_power_of_2(rows)))
    _sum_scaled_kernel[(1,)](per_row, out, rows, 1.0 / rows, BLOCK=fin, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p, t = predictions, targets
        if (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.shape == t.shape
                and p.dim() == 2 and p.numel() > 0):
            return cosine_loss_mean(p.contiguous(), t.contiguous(), 1e-8)
        return (1.0 - F.cosine_similarity(p, t, dim=1)).mean()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self._graph(predictions, targets)
