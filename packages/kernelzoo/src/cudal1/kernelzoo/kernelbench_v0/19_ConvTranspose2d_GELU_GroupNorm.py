"""KernelBench level 2, 19_ConvTranspose2d_GELU_GroupNorm (x: (128, 32, 32, 32) fp32; ConvTranspose2d(32 -> 64,
k=4, stride 2) -> (128, 64, 66, 66), 143 MB; exact (erf) GELU; GroupNorm(8 groups, eps 1e-5, affine)).

cuDNN runs the transposed convolution without its bias (module weight, fp32, no TF32) and ONE Triton kernel does
the tail, a program per (sample, group) (8 channels x 4356 = 34848 contiguous values, 139 KB):
1. statistics pass: conv bias + GELU, per BLOCK chunk the mean and centred sum of squares in registers, merged
   with Chan's formula (no E[x^2] - E[x]^2 cancellation);
2. apply pass: re-reads the group (mostly from L2), recomputes bias + GELU, normalises, applies the affine map and
   writes in place.
Eager runs the bias add, GELU (read + write 143 MB) and the group norm (statistics read, normalise read + write):
about 0.7 GB of traffic and 4 launches after the conv, against about 0.3-0.4 GB and one launch here. Reference
2.30 ms (2026-11-24 H100 self-run), most of it the conv; expect about 1.1x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.00x, 95% CI [0.99, 1.02] (no measurable gain: the transposed convolution in cuDNN is nearly all of the time; counted as unsolved) (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gelu(v):
    return 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))


@triton.jit
def _gelu_gn_kernel(y_ptr, cb_ptr, gamma_ptr, beta_ptr, plane, eps, G, CPG, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # n * G + g
    g = pid % G
    L = CPG * plane
    base = pid.to(tl.int64) * L  # the group's channels are contiguous
    zero = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    cnt_a = zero
    mean_a = zero
    m2_a = zero
    for start in range(0, L, BLOCK):
        o = start + tl.arange(0, BLOCK)
        m = o < L
        c = g * CPG + o // plane
        v = _gelu(tl.load(y_ptr + base + o, mask=m, other=0.0) + tl.load(cb_ptr + c, mask=m, other=0.0))
        cnt_t = tl.minimum(L - start, BLOCK).to(tl.float32)
        mean_t = tl.sum(tl.where(m, v, 0.0), 0) / cnt_t
        d = tl.where(m, v - mean_t, 0.0)
        m2_t = tl.sum(d * d, 0)
        cnt_new = cnt_a + cnt_t
        delta = mean_t - mean_a
        frac = cnt_t / cnt_new
        mean_a = mean_a + delta * frac
        m2_a = m2_a + m2_t + delta * delta * cnt_a * frac
        cnt_a = cnt_new
    rstd = 1.0 / tl.sqrt(m2_a / cnt_a + eps)
    for start in range(0, L, BLOCK):
        o = start + tl.arange(0, BLOCK)
        m = o < L
        c = g * CPG + o // plane
        v = _gelu(tl.load(y_ptr + base + o, mask=m, other=0.0) + tl.load(cb_ptr + c, mask=m, other=0.0))
        gam = tl.load(gamma_ptr + c, mask=m, other=0.0)
        bet = tl.load(beta_ptr + c, mask=m, other=0.0)
        tl.store(y_ptr + base + o, (v - mean_a) * rstd * gam + bet, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, groups, num_groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.group_norm = nn.GroupNorm(num_groups=num_groups, num_channels=out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct, gn = self.conv_transpose, self.group_norm
        if not (x.is_cuda and x.dtype == torch.float32 and ct.bias is not None and gn.affine):
            return gn(F.gelu(ct(x)))
        y = F.conv_transpose2d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        n, c = y.shape[:2]
        plane = y[0, 0].numel()
        G = gn.num_groups
        block = max(16, min(4096, triton.next_power_of_2((c // G) * plane)))
        _gelu_gn_kernel[(n * G,)](y, ct.bias, gn.weight, gn.bias, plane, gn.eps, G, c // G, BLOCK=block,
                                  num_warps=8)
        return y
