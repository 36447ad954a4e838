"""KernelBench level 1, 92_cumsum_exclusive (x: (128, 4000) fp32, dim 1). The task computes
``cumsum(cat((zeros, x), dim)[:-1], dim)``; the ``[:-1]`` slices dim 0, so for dim 1 the output is (127, 4001):
``y[i, 0] = 0`` and ``y[i, k] = sum_{r < k} x[i, r]`` for the first 127 rows.

One Triton kernel, one program per output row, scans the row shifted by one (a masked load at ``k - 1``, 0 at
``k = 0``) with ``tl.cumsum`` (a tree scan in fp32) in BLOCK-long chunks and a carried fp32 total (the 4001
outputs fit one 4096 chunk), writing the 4001 outputs directly: no zeros tensor, no concatenated copy. The kernel
runs inside a CUDA graph (``blocks.cudagraph.CUDAGraphForward``): each call is one input copy, one graph replay
and one output clone. Only the task's layout (dim the last one) takes the kernel; other dims keep torch's
formulation (inside the graph as well).

Eager runs zeros_like, cat and cumsum: three launches. The earlier bare-launch version of this kernel beat eager
once, then was rejected ``reference_drift``: in the harness's worker a Triton launch from Python costs about as
much host time as four eager launches; the graph costs about three (copy, replay, clone) plus a 2 MB copy on the
GPU.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _exclusive_scan_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_base = row * n_cols
    y_base = row * (n_cols + 1)
    carry = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    for start in range(0, n_cols + 1, BLOCK):
        k = start + tl.arange(0, BLOCK)  # output column; it sums x[row, :k]
        x = tl.load(x_ptr + x_base + k - 1, mask=(k >= 1) & (k <= n_cols), other=0.0)
        tl.store(y_ptr + y_base + k, tl.cumsum(x, 0) + carry, mask=k <= n_cols)
        carry += tl.sum(x, 0)


def exclusive_scan_rows(x: torch.Tensor) -> torch.Tensor:
    """(rows, n + 1) exclusive prefix sums of a contiguous float32 (rows, n) tensor (GPU or interpreter)."""
    rows, n = x.shape
    y = torch.empty(rows, n + 1, device=x.device, dtype=x.dtype)
    if rows:
        block = min(4096, triton.next_power_of_2(n + 1))
        _exclusive_scan_rows_kernel[(rows,)](x, y, n, BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        nd = x.dim()
        if x.is_cuda and x.dtype == torch.float32 and nd >= 2 and self.dim % nd == nd - 1 and x.shape[0] > 0:
            xs = x[:-1].contiguous()  # the rows the task's [:-1] keeps
            n = x.shape[-1]
            y = exclusive_scan_rows(xs.view(-1, n))
            return y.view(*xs.shape[:-1], n + 1)
        head = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        return torch.cumsum(torch.cat((head, x), dim=self.dim)[:-1], dim=self.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
