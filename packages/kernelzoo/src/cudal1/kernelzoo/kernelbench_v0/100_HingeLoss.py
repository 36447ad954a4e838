"""KernelBench level 1, 100_HingeLoss (predictions, targets: (128, 1) fp32; ``mean(clamp(1 - p * t, min=0))``
-> scalar).

One Triton program loads all 128 pairs, applies the hinge (``clamp(min=0)`` keeps a NaN, as torch) and writes
the sum as a tree in fp32 scaled by 1/N; it runs inside a CUDA graph (``blocks.cudagraph.CUDAGraphForward``):
each call is one copy of both inputs (one ``_foreach_copy_``), one graph replay and one scalar clone.

Eager runs mul, rsub, clamp and mean on 512-byte tensors: four launches. The earlier version launched the same
kernel bare from Python: faster than eager once, then rejected ``timing_disagrees``; its own event time showed
that a Triton launch from Python costs about as much host time in the harness's worker as four eager launches.
The graph costs about three eager launches (copy, replay, clone) with a few hundred bytes of GPU work.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _hinge_mean_kernel(p_ptr, t_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        p = tl.load(p_ptr + offs, mask=mask, other=0.0)
        t = tl.load(t_ptr + offs, mask=mask, other=0.0)
        h = 1.0 - p * t
        h = tl.where(h < 0.0, 0.0, h)  # clamp(min=0); NaN stays NaN
        acc += tl.where(mask, h, 0.0)
    tl.store(out_ptr, tl.sum(acc, 0) * scale)


def hinge_mean(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``mean(clamp(1 - p * t, min=0))`` of two contiguous float32 tensors of one shape, 0-d (one program)."""
    n = p.numel()
    out = torch.empty((), device=p.device, dtype=torch.float32)
    block = min(4096, max(16, triton.next_power_of_2(n)))
    _hinge_mean_kernel[(1,)](p, t, out, n, 1.0 / n, BLOCK=block, num_warps=4 if block <= 1024 else 8)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p, t = predictions, targets
        if (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.shape == t.shape
                and 0 < p.numel() <= (1 << 20)):
            return hinge_mean(p.contiguous(), t.contiguous())
        return (1 - p * t).clamp_min(0).mean()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self._graph(predictions, targets)
