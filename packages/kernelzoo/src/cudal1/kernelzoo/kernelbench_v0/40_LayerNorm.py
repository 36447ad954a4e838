"""KernelBench level 1, 40_LayerNorm (x: (16, 64, 256, 256) fp32, nn.LayerNorm((64, 256, 256)): 16 rows of
D = 4 Mi elements each, elementwise weight and bias of shape (64, 256, 256)): two Triton kernels that use the
whole GPU. Eager's layer-norm kernels put one thread block on each row, so only 16 of the 132 SMs (Hopper) stream
the 268 MB input (twice) and the output. Here:
1. statistics, grid (16 rows, SPLIT = 128 chunks): each program reduces a 32 Ki-element chunk to (mean, M2),
   merging BLOCK-sized tiles with Chan's update (no E[x^2] - E[x]^2 cancellation);
2. apply, grid (D / BLOCK): each program loads its weight/bias tile once, then for every row merges that row's
   SPLIT partials (Chan again, vectorised; 1 KiB from L2) and writes ``(x - mean) * rstd * w + b``.
Traffic: x read twice, y written once, weight and bias read once (about 870 MB) with every SM busy.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_stats_kernel(x_ptr, mean_ptr, m2_ptr, n_cols, chunk, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    base = row.to(tl.int64) * n_cols
    lo = part * chunk
    hi = tl.minimum(lo + chunk, n_cols)
    n_a = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    mean_a = n_a
    m2_a = n_a
    for start in range(lo, hi, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < hi
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        n_b = tl.sum(tl.where(mask, 1.0, 0.0), 0)
        mean_b = tl.sum(x, 0) / n_b
        d = tl.where(mask, x - mean_b, 0.0)
        m2_b = tl.sum(d * d, 0)
        n = n_a + n_b
        delta = mean_b - mean_a
        mean_a += delta * (n_b / n)
        m2_a += m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    tl.store(mean_ptr + row * SPLIT + part, mean_a)
    tl.store(m2_ptr + row * SPLIT + part, m2_a)


@triton.jit
def _ln_apply_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, y_ptr, n_rows, n_cols, chunk, eps,
                     SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    parts = tl.arange(0, SPLIT)
    cnt = tl.minimum(tl.maximum(n_cols - parts * chunk, 0), chunk).to(tl.float32)
    x_ptrs = x_ptr + offs  # advanced one row at a time: 64-bit pointer arithmetic, no int32 overflow
    y_ptrs = y_ptr + offs
    for row in range(0, n_rows):
        mu = tl.load(mean_ptr + row * SPLIT + parts)
        m2 = tl.load(m2_ptr + row * SPLIT + parts)
        mean = tl.sum(cnt * mu, 0) / n_cols
        dev = mu - mean
        var = tl.sum(m2 + cnt * dev * dev, 0) / n_cols
        rstd = 1.0 / tl.sqrt(var + eps)
        x = tl.load(x_ptrs, mask=mask, other=0.0)
        tl.store(y_ptrs, (x - mean) * rstd * w + b, mask=mask)
        x_ptrs += n_cols
        y_ptrs += n_cols


def layer_norm_wide(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    """Layer norm of float32 ``x`` (..., *weight.shape) on CUDA over its last ``weight.dim()`` dims."""
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n_cols = weight.numel()
    n_rows = xc.numel() // n_cols if n_cols else 0
    if xc.numel() == 0:
        return y
    block = min(4096, triton.next_power_of_2(n_cols))
    split = min(256, triton.next_power_of_2(triton.cdiv(n_cols, 32768)))
    chunk = triton.cdiv(triton.cdiv(n_cols, split), block) * block
    mean = torch.empty(n_rows * split, dtype=torch.float32, device=x.device)
    m2 = torch.empty_like(mean)
    _ln_stats_kernel[(n_rows, split)](xc, mean, m2, n_cols, chunk, SPLIT=split, BLOCK=block, num_warps=8)
    block_a = min(2048, triton.next_power_of_2(n_cols))
    _ln_apply_kernel[(triton.cdiv(n_cols, block_a),)](xc, weight.contiguous(), bias.contiguous(), mean, m2, y,
                                                      n_rows, n_cols, chunk, eps, SPLIT=split, BLOCK=block_a,
                                                      num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)  # weight, bias, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ln = self.ln
        if not (x.is_cuda and x.dtype == torch.float32 and ln.weight is not None and ln.bias is not None):
            return ln(x)
        return layer_norm_wide(x, ln.weight, ln.bias, ln.eps)
