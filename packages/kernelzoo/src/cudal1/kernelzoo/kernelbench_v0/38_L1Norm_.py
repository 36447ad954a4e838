"""KernelBench level 1, 38_L1Norm_ (x: (16, 16384) fp32; ``x / sum(|x|, dim=1, keepdim=True)``): one Triton
kernel, one program per row holding the whole 16384-element row in registers (one read, one write; longer rows
take a sum pass and a write pass). Eager runs abs (writing a full temporary), sum and a broadcast divide: three
launches on a 1 MB input, so the call is launch-bound and one launch should give about 1.2-1.4x. Not yet measured
on a GPU."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _l1_normalize_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr, ONE_TILE: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    if ONE_TILE:
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, x / tl.sum(tl.abs(x), 0), mask=mask)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.abs(tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0))
        total = tl.sum(acc, 0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
            tl.store(y_ptr + base + cols, x / total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2):
            return x / x.abs().sum(1, keepdim=True)
        xc = x.contiguous()
        y = torch.empty_like(xc)
        rows, n_cols = xc.shape
        if xc.numel():
            whole = triton.next_power_of_2(n_cols)
            one = whole <= 16384
            block = whole if one else 4096
            _l1_normalize_rows_kernel[(rows,)](xc, y, n_cols, BLOCK=block, ONE_TILE=one,
                                               num_warps=16 if block >= 8192 else 8)
        return y
