"""KernelBench level 2, 34_ConvTranspose3d_LayerNorm_GELU_Scaling (x: (128, 32, 16, 32, 32) fp32;
ConvTranspose3d(32 -> 64, k=4, stride 2, padding 1) -> (128, 64, 32, 64, 64), 4.3 GB; LayerNorm(64) over the
LAST dimension (W, which is 64 here; it normalises rows of the W axis, not channels); exact (erf) GELU;
``* scaling_factor``).

cuDNN runs the transposed convolution without its bias (module weight, fp32, no TF32) and ONE Triton kernel does
the whole tail in place, 64 rows of 64 values per program: the row's conv bias (one channel per row), mean and
centred variance in registers (two-pass, no cancellation), normalise, LayerNorm affine, GELU, scale: one read and
one write of the 4.3 GB tensor. Eager runs the bias add (read + write), the layer norm (read + write), GELU
(read + write) and the multiply (read + write): about 34 GB of traffic after the conv against 8.6 GB here, about
8 ms less at H100 bandwidth. No 2026-11-24 reference time (the self-run has none for this task); expect about
1.5-2x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.34x, 95% CI [1.34, 1.34] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _ln_gelu_scale_kernel(y_ptr, cb_ptr, lw_ptr, lb_ptr, n_rows, rows_per_ch, C, R, eps, scale,
                          ROWS: tl.constexpr, RB: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)  # row = ((n * C + c) * D + d) * H + h
    rmask = r < n_rows
    k = tl.arange(0, RB)
    kmask = k < R
    m = rmask[:, None] & kmask[None, :]
    offs = r.to(tl.int64)[:, None] * R + k[None, :]
    cb = tl.load(cb_ptr + (r // rows_per_ch) % C, mask=rmask, other=0.0)
    v = tl.load(y_ptr + offs, mask=m, other=0.0) + cb[:, None]
    mean = tl.sum(tl.where(m, v, 0.0), 1) / R
    d = tl.where(m, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / R + eps)
    w = tl.load(lw_ptr + k, mask=kmask, other=0.0)
    b = tl.load(lb_ptr + k, mask=kmask, other=0.0)
    z = d * rstd[:, None] * w[None, :] + b[None, :]
    z = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
    tl.store(y_ptr + offs, z * scale, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True, eps=1e-5,
                 scaling_factor=1.0):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, bias=bias)
        self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct, ln = self.conv_transpose, self.layer_norm
        if not (x.is_cuda and x.dtype == torch.float32 and ct.bias is not None and ln.weight is not None
                and ln.bias is not None and len(ln.normalized_shape) == 1 and ln.normalized_shape[0] <= 1024):
            return F.gelu(ln(ct(x))) * self.scaling_factor
        y = F.conv_transpose3d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        R = y.shape[-1]
        if R != ln.normalized_shape[0]:  # the reference raises here; so does F.layer_norm
            return F.gelu(ln(y + ct.bias.view(1, -1, 1, 1, 1))) * self.scaling_factor
        n_rows = y.numel() // R
        rb = triton.next_power_of_2(R)
        rows = max(1, 4096 // rb)
        _ln_gelu_scale_kernel[(triton.cdiv(n_rows, rows),)](
            y, ct.bias, ln.weight, ln.bias, n_rows, y.shape[2] * y.shape[3], y.shape[1], R, ln.eps,
            float(self.scaling_factor), ROWS=rows, RB=rb, num_warps=8)
        return y
