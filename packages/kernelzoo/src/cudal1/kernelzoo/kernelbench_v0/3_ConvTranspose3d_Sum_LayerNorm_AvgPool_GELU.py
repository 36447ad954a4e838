"""KernelBench level 2, 3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU (x: (128, 32, 16, 32, 32) fp32;
ConvTranspose3d(32 -> 64, k=3, stride=2, pad=1, output_pad=1) -> (128, 64, 32, 64, 64), 8.6 GB; ``+ sum_weight``
(0-dim parameter); LayerNorm((64,)) -- over the LAST dim, W = 64, not the channels; AvgPool3d(2) ->
(128, 64, 16, 32, 32); GELU (erf)).

cuDNN runs the transposed convolution without its bias (F.conv_transpose3d with the module's weight, fp32) and
one Triton kernel does everything after it: each program owns ROWS pooled output rows (n, c, d', h'); for each
of the 4 input rows (2d' + i, 2h' + j) it loads the W = 64 values as even and odd columns, adds the conv bias
and sum_weight, normalises the row (mean, centred variance, eps as the module) with the LayerNorm affine, and
sums the even/odd pairs into the 2x2x2 window; then ``gelu(sum / 8)`` is written. One read of the 8.6 GB
conv output and one 0.54 GB write, where eager makes a separate bias pass, the sum_weight add (read + write
8.6 GB), the LayerNorm (read + write), the pool (read) and the GELU: about 46 GB against our 9.1 GB; the
464 GFLOP transposed conv, unchanged, dominates the rest.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _ln_pool_gelu_kernel(y_ptr, cb_ptr, sw_ptr, lw_ptr, lb_ptr, out_ptr, n_rows_out, n_ch, D, H, W, D2, H2, W2,
                         eps, ROWS: tl.constexpr, BLOCK_W2: tl.constexpr):
    o = tl.program_id(0) * ROWS + tl.arange(0, ROWS)  # pooled rows (n, c, d', h')
    rmask = o < n_rows_out
    h2 = o % H2
    t = o // H2
    d2 = t % D2
    nc = t // D2
    c = nc % n_ch
    w2 = tl.arange(0, BLOCK_W2)
    me = (2 * w2 < W)[None, :] & rmask[:, None]
    mo = (2 * w2 + 1 < W)[None, :] & rmask[:, None]
    shift = tl.load(cb_ptr + c, mask=rmask, other=0.0) + tl.load(sw_ptr)  # conv bias + sum_weight
    lwe = tl.load(lw_ptr + 2 * w2, mask=2 * w2 < W, other=0.0)[None, :]
    lwo = tl.load(lw_ptr + 2 * w2 + 1, mask=2 * w2 + 1 < W, other=0.0)[None, :]
    lbe = tl.load(lb_ptr + 2 * w2, mask=2 * w2 < W, other=0.0)[None, :]
    lbo = tl.load(lb_ptr + 2 * w2 + 1, mask=2 * w2 + 1 < W, other=0.0)[None, :]
    acc = tl.zeros([ROWS, BLOCK_W2], tl.float32)
    for i in tl.static_range(2):
        for j in tl.static_range(2):
            row = (nc.to(tl.int64) * D + 2 * d2 + i) * H + 2 * h2 + j
            base = (row * W)[:, None] + 2 * w2[None, :]
            xe = tl.load(y_ptr + base, mask=me, other=0.0) + shift[:, None]
            xo = tl.load(y_ptr + base + 1, mask=mo, other=0.0) + shift[:, None]
            mean = (tl.sum(tl.where(me, xe, 0.0), 1) + tl.sum(tl.where(mo, xo, 0.0), 1)) / W
            de = tl.where(me, xe - mean[:, None], 0.0)
            do = tl.where(mo, xo - mean[:, None], 0.0)
            rstd = 1.0 / tl.sqrt((tl.sum(de * de, 1) + tl.sum(do * do, 1)) / W + eps)
            acc += de * rstd[:, None] * lwe + lbe + do * rstd[:, None] * lwo + lbo
    v = acc * 0.125
    g = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    omask = rmask[:, None] & (w2 < W2)[None, :]
    tl.store(out_ptr + (o.to(tl.int64) * W2)[:, None] + w2[None, :], g, mask=omask)


def ln_pool_gelu(y: torch.Tensor, conv_bias: torch.Tensor, sum_weight: torch.Tensor, ln: nn.LayerNorm) -> torch.Tensor:
    """``gelu(avg_pool3d(layer_norm(y + conv_bias[c] + sum_weight over W), 2))`` for contiguous fp32 CUDA y."""
    n, c, d, h, w = y.shape
    d2, h2, w2 = d // 2, h // 2, w // 2
    out = torch.empty((n, c, d2, h2, w2), device=y.device, dtype=y.dtype)
    rows = n * c * d2 * h2
    if out.numel() == 0:
        return out
    block_w2 = triton.next_power_of_2((w + 1) // 2)
    block_rows = max(1, min(32, 1024 // block_w2))
    _ln_pool_gelu_kernel[(triton.cdiv(rows, block_rows),)](y, conv_bias, sum_weight, ln.weight, ln.bias, out, rows,
                                                          c, d, h, w, d2, h2, w2, ln.eps, ROWS=block_rows,
                                                          BLOCK_W2=block_w2, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, sum_weight,
                 norm_shape, pool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.sum_weight = nn.Parameter(torch.tensor(sum_weight))
        self.norm = nn.LayerNorm(norm_shape)
        pool = (pool_kernel_size,) * 3 if isinstance(pool_kernel_size, int) else tuple(pool_kernel_size)
        if pool != (2, 2, 2) or len(self.norm.normalized_shape) != 1:
            raise ValueError("the fused tail handles AvgPool3d(2) after a LayerNorm over the last dim only")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        if not x.is_cuda:
            return F.gelu(F.avg_pool3d(self.norm(ct(x) + self.sum_weight), 2))
        y = F.conv_transpose3d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        return ln_pool_gelu(y, ct.bias, self.sum_weight, self.norm)
