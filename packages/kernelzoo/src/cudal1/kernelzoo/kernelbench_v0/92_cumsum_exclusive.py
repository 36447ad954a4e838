"""KernelBench level 1, 92_cumsum_exclusive (x: (128, 4000) fp32, dim 1). The task's forward is
``cumsum(cat((zeros, x), dim)[:-1], dim)``: the ``[:-1]`` slices dim 0, so for dim 1 the output is (127, 4001),
``y[i, 0] = 0`` and ``y[i, k] = sum_{r < k} x[i, r]`` for the first 127 rows. One Triton kernel, one program per
output row, scans the row shifted by one (a masked load at ``k - 1``, 0 at ``k = 0``) with ``tl.cumsum`` in
BLOCK-long chunks and a carried total, writing the 4001 outputs directly: no zeros tensor, no concatenated copy.
Eager runs zeros_like, cat and cumsum (three launches, two full passes before the scan) on a launch-bound 2 MB
input, so about 1.3-1.5x. Only the task's layout (dim the last one) takes the kernel; other dims keep torch's
formulation. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.15x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _exclusive_scan_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_base = row * n_cols
    y_base = row * (n_cols + 1)
    carry = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    for start in range(0, n_cols + 1, BLOCK):
        k = start + tl.arange(0, BLOCK)  # output column; it sums x[:, :k]
        x = tl.load(x_ptr + x_base + k - 1, mask=(k >= 1) & (k <= n_cols), other=0.0)
        tl.store(y_ptr + y_base + k, tl.cumsum(x, 0) + carry, mask=k <= n_cols)
        carry += tl.sum(x, 0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        d = self.dim % x.dim() if x.dim() else 0
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() >= 2 and d == x.dim() - 1 and x.shape[0] > 0):
            head = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
            return torch.cumsum(torch.cat((head, x), dim=self.dim)[:-1], dim=self.dim)
        xs = x[:-1].contiguous()  # the rows the task's [:-1] keeps (a view of x when x is contiguous)
        n_cols = x.shape[-1]
        y = torch.empty(*xs.shape[:-1], n_cols + 1, device=x.device, dtype=x.dtype)
        rows = y.numel() // (n_cols + 1)
        if rows:
            block = min(4096, triton.next_power_of_2(n_cols + 1))
            _exclusive_scan_rows_kernel[(rows,)](xs, y, n_cols, BLOCK=block, num_warps=8)
        return y
