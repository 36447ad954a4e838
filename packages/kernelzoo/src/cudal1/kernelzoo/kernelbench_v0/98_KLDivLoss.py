"""KernelBench level 1, 98_KLDivLoss (predictions, targets: (128, 4096) fp32 probability rows;
``kl_div(log(predictions), targets, reduction="batchmean")`` -> scalar): one Triton program per row computes
``sum_j xlogy(t, t) - t * log(p)`` in one pass (the same terms and order as torch: ``t == 0`` gives 0 for the
xlogy term; a log of 0 gives -inf, and 0 * -inf NaN, as eager) and writes it divided by the batch size; one sum
over the 128 row values gives the loss. Eager runs log (a (128, 4096) temporary), then kl_div's xlogy, mul, sub
(three more temporaries), sum and the batchmean divide: six launches on 4 MB of input, launch-bound; two launches
here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kl_div_rows_kernel(p_ptr, t_ptr, out_ptr, n_cols, inv_batch, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + base + cols, mask=mask, other=1.0)
        t = tl.load(t_ptr + base + cols, mask=mask, other=0.0)
        xlogy = tl.where(t == 0.0, 0.0, t * tl.log(t))  # NaN t stays NaN (t == 0 is false)
        acc += tl.where(mask, xlogy - t * tl.log(p), 0.0)
    tl.store(out_ptr + row, tl.sum(acc, 0) * inv_batch)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        p, t = predictions, targets
        if not (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.dim() >= 1
                and p.shape == t.shape and p.numel() > 0):
            return (torch.xlogy(t, t) - t * p.log()).sum() / p.shape[0]
        p, t = p.contiguous(), t.contiguous()
        rows = p.shape[0]
        n_cols = p.numel() // rows
        out = torch.empty(rows, device=p.device, dtype=torch.float32)
        block = min(4096, triton.next_power_of_2(max(n_cols, 16)))
        _kl_div_rows_kernel[(rows,)](p, t, out, n_cols, 1.0 / rows, BLOCK=block, num_warps=8)
        return out.sum()
