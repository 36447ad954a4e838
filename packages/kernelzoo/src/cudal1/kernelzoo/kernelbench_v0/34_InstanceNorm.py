"""KernelBench level 1, 34_InstanceNorm (x: (16, 64, 256, 256) fp32, ``nn.InstanceNorm2d(64)``: no affine, no
running statistics, so every (n, c) plane of 65536 values is normalised by its own mean and biased variance,
eps 1e-5).

One Triton kernel, one program (16 warps) per plane, two sweeps over the plane's 256 KB: the statistics sweep
(8192-element chunks, shifted sums ``sum(x - c)`` and ``sum((x - c)^2)`` in fp32 lanes with c the first chunk's
mean, so the variance does not cancel when the mean is large; tree-reduced at the end) loads with
``evict_last``; the write sweep walks the chunks in reverse, so its first reads are the chunks the statistics
sweep read last (still in L1/L2), and writes ``(x - mean) * rstd`` with streaming (``evict_first``) loads and
stores. DRAM sees about one read and one write of x (537 MB), plus whatever of the plane fell out of L2 between
the two sweeps (about 130-260 planes in flight: 34-67 MB against the 50 MB L2).

Eager reshapes to (1, N * C, H, W) and runs a training-mode batch norm: a statistics pass and a normalising
pass. The earlier version (the zoo's group norm with groups = C: a statistics kernel and an
apply kernel, three full passes) was no faster than eager. Not graph-wrapped: the 268 MB input copy would cost
more than the launch. The Triton launch overhead on the host stays on top of the GPU time.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _instance_norm_plane_kernel(x_ptr, y_ptr, hw, eps, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * hw
    offs = tl.arange(0, BLOCK)
    first = tl.load(x_ptr + base + offs, mask=offs < hw, other=0.0)
    shift = tl.sum(first, 0) / tl.minimum(hw, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    acc2 = tl.zeros([BLOCK], tl.float32)
    for start in range(0, hw, BLOCK):
        cols = start + offs
        mask = cols < hw
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        d = tl.where(mask, x - shift, 0.0)
        acc += d
        acc2 += d * d
    mean_d = tl.sum(acc, 0) / hw
    var = tl.maximum(tl.sum(acc2, 0) / hw - mean_d * mean_d, 0.0)
    mean = shift + mean_d
    rstd = 1.0 / tl.sqrt(var + eps)
    last = (hw - 1) // BLOCK * BLOCK
    for start in range(0, hw, BLOCK):
        cols = last - start + offs  # newest chunk first: it is the likeliest still cached
        mask = cols < hw
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        tl.store(y_ptr + base + cols, (x - mean) * rstd, mask=mask, eviction_policy="evict_first")


def instance_norm_planes(x: torch.Tensor, eps: float) -> torch.Tensor:
    """Per-plane normalisation of a contiguous float32 (N, C, *spatial) tensor (no affine), like ``x``."""
    y = torch.empty_like(x)
    planes = x.shape[0] * x.shape[1]
    hw = x[0, 0].numel()
    if x.numel():
        block = min(8192, max(16, triton.next_power_of_2(hw)))
        _instance_norm_plane_kernel[(planes,)](x, y, hw, eps, BLOCK=block,
                                               num_warps=16 if block >= 8192 else (8 if block >= 2048 else 4))
    return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)  # eps; affine / running stats are off

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.inorm
        if m.affine or m.track_running_stats or not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4):
            return m(x)  # not the task's configuration: torch's semantics
        return instance_norm_planes(x.contiguous(), float(m.eps))
