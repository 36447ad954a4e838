"""KernelBench level 2, 51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd (x: (128, 1024) fp32;
Linear(1024 -> 512); minus ``subtract`` (512,); mean over the 512 features; logsumexp over that single column
(the identity: ``m + log(exp(0))``); exact GELU; plus x -> (128, 1024)).

Exact algebra (holds for every input and parameter value): the mean over output features of ``x W^T + b - s``
is ``(x . sum_j W[j] + sum_j (b_j - s_j)) / 512``, so the 134 MFLOP GEMM collapses to a column sum of W and one
dot product per row. Two Triton launches: column sums of W (2 MB read, fp32), then one program per row: the
dot product, ``sum(b - s)``, GELU (erf form, as F.gelu) and the residual add, one read of x and one write.
Eager runs clone, GEMM, subtract, mean, logsumexp (several kernels), GELU and add: about ten launches, launch-bound,
against two here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _col_sum_kernel(w_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cm = cols < n_cols
    acc = tl.zeros([BLOCK_C], tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        w = tl.load(w_ptr + rows[:, None] * n_cols + cols[None, :], mask=(rows < n_rows)[:, None] & cm[None, :],
                    other=0.0)
        acc += tl.sum(w, 0)
    tl.store(out_ptr + cols, acc, mask=cm)


@triton.jit
def _row_kernel(x_ptr, wsum_ptr, b_ptr, s_ptr, y_ptr, n_in, n_out, BLOCK_K: tl.constexpr, BLOCK_J: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    dot = tl.zeros([BLOCK_K], tl.float32)
    for k0 in range(0, n_in, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        km = k < n_in
        dot += tl.load(x_ptr + row * n_in + k, mask=km, other=0.0) * tl.load(wsum_ptr + k, mask=km, other=0.0)
    bs = tl.zeros([BLOCK_J], tl.float32)
    for j0 in range(0, n_out, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        jm = j < n_out
        bs += tl.load(b_ptr + j, mask=jm, other=0.0) - tl.load(s_ptr + j, mask=jm, other=0.0)
    m = (tl.sum(dot, 0) + tl.sum(bs, 0)) / n_out
    g = 0.5 * m * (1.0 + tl.math.erf(m * 0.7071067811865476))
    for k0 in range(0, n_in, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        km = k < n_in
        xv = tl.load(x_ptr + row * n_in + k, mask=km, other=0.0)
        tl.store(y_ptr + row * n_in + k, xv + g, mask=km)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)
        self.subtract = nn.Parameter(torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.gemm.weight, self.gemm.bias
        if b is None:
            b = torch.zeros_like(self.subtract)
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2):
            m = (x @ w.sum(dim=0) + (b - self.subtract).sum()) / w.shape[0]
            return F.gelu(m).unsqueeze(1) + x
        return self._fused(x, w, b)

    def _fused(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        x, w = x.contiguous(), w.contiguous()
        n_out, n_in = w.shape
        wsum = torch.empty(n_in, device=x.device, dtype=torch.float32)
        _col_sum_kernel[(triton.cdiv(n_in, 64),)](w, wsum, n_out, n_in, BLOCK_R=64, BLOCK_C=64, num_warps=4)
        y = torch.empty_like(x)
        _row_kernel[(x.shape[0],)](x, wsum, b.contiguous(), self.subtract.contiguous(), y, n_in, n_out,
                                   BLOCK_K=min(1024, triton.next_power_of_2(n_in)),
                                   BLOCK_J=min(1024, triton.next_power_of_2(n_out)), num_warps=4)
        return y
