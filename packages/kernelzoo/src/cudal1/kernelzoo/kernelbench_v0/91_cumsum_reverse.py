"""KernelBench level 1, 91_cumsum_reverse (x: (128, 4000) fp32, dim 1; ``cumsum(x.flip(1), 1).flip(1)``, i.e.
the suffix sum ``y[i, k] = sum_{r >= k} x[i, r]``): one Triton kernel, one program per row, scanning BLOCK-long
chunks from the end of the row with ``tl.cumsum(reverse=True)`` and carrying the running total between chunks
(the 4000-long rows fit one chunk). One read and one write (4 MB); eager runs flip (a copy), cumsum and flip
(another copy): three launches and three passes over a launch-bound 2 MB input, so about 1.3-1.5x. Another
``dim`` is moved last first (a copy; not this task's case). Not yet measured on a GPU."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _suffix_sum_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    carry = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    for i in range(0, tl.cdiv(n_cols, BLOCK)):
        cols = n_cols - (i + 1) * BLOCK + tl.arange(0, BLOCK)  # chunks taken from the end of the row
        mask = cols >= 0
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        s = tl.cumsum(x, 0, reverse=True) + carry
        tl.store(y_ptr + base + cols, s, mask=mask)
        carry += tl.sum(x, 0)


def suffix_sum(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``y[..., k, ...] = sum_{r >= k} x[..., r, ...]`` along ``dim`` of float32 ``x`` on CUDA."""
    xt = x.movedim(dim, -1).contiguous()
    y = torch.empty_like(xt)
    n_cols = xt.shape[-1] if xt.dim() else 1
    if xt.numel():
        block = min(4096, triton.next_power_of_2(max(n_cols, 16)))
        _suffix_sum_rows_kernel[(xt.numel() // n_cols,)](xt, y, n_cols, BLOCK=block, num_warps=8)
    return y.movedim(-1, dim)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() >= 1):
            return torch.flip(torch.flip(x, (self.dim,)).cumsum(self.dim), (self.dim,))
        return suffix_sum(x, self.dim)
