"""KernelBench level 2, 44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean (x: (128, 3, 32, 32) fp32;
ConvTranspose2d(3 -> 16, k=3, stride 2, padding 1, output_padding 1) -> (128, 16, 64, 64), 34 MB;
``* multiplier``, spatial mean twice -> (128, 16, 1, 1)).

Exact algebra (holds for every input and every parameter value): the mean of a mean over size-1 dims is the
same mean, the multiplier commutes with it, and the spatial sum of a transposed convolution's output is the sum
of its (input position, kernel tap) products that land inside the output: tap kh of input row ih lands on row
``ih * stride - padding + kh``, so the sum of channel co is ``sum_{ci, kh, kw} w[ci, co, kh, kw] * S[ci, kh, kw]
+ bias[co] * OH * OW`` where S sums x[n, ci] over the rows and columns whose tap lands in [0, OH) x [0, OW)
(here the padding crops the first row / column for tap 0; the output padding keeps the rest). One Triton
kernel, one program per sample: it loads the sample's (3, 32, 32) input once (12 KB), forms the masked
row/column sums and the 16 channel means, adds the bias and scales; the 34 MB conv output is never formed.
Eager runs cuDNN's dgrad conv, its bias pass, the multiply and two means, mostly the conv and
its 34 MB write + re-reads. One launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _convt_channel_sums(x_ptr, w_ptr, n, co, comask, C_IN, C, H, W, OH, OW, K: tl.constexpr, S: tl.constexpr,
                        P: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_CO: tl.constexpr):
    """Sum over all output positions of a transposed conv (groups 1, dilation 1, no bias), per out channel."""
    ih = tl.arange(0, BLOCK_H)
    iw = tl.arange(0, BLOCK_W)
    xmask = (ih < H)[:, None] & (iw < W)[None, :]
    acc = tl.zeros([BLOCK_CO], tl.float32)
    for ci in range(C_IN):
        xb = x_ptr + (n * C_IN + ci).to(tl.int64) * H * W
        xt = tl.load(xb + ih[:, None] * W + iw[None, :], mask=xmask, other=0.0)
        wb = w_ptr + (ci * C + co) * (K * K)  # weight (C_in, C_out, K, K)
        for kh in tl.static_range(K):
            rh = ih * S - P + kh
            col = tl.sum(tl.where(((rh >= 0) & (rh < OH))[:, None], xt, 0.0), 0)  # (BLOCK_W,)
            for kw in tl.static_range(K):
                rw = iw * S - P + kw
                s = tl.sum(tl.where((rw >= 0) & (rw < OW), col, 0.0), 0)
                acc += s * tl.load(wb + kh * K + kw, mask=comask, other=0.0)
    return acc



@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, C, H, W, OH, OW, mult, K: tl.constexpr, S: tl.constexpr,
                  P: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_CO: tl.constexpr):
    n = tl.program_id(0)
    co = tl.arange(0, BLOCK_CO)
    comask = co < C
    acc = _convt_channel_sums(x_ptr, w_ptr, n, co, comask, C_IN, C, H, W, OH, OW, K, S, P, BLOCK_H, BLOCK_W,
                              BLOCK_CO)
    m = acc / (OH * OW) + tl.load(cb_ptr + co, mask=comask, other=0.0)
    tl.store(out_ptr + n * C + co, m * mult, mask=comask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.multiplier = multiplier

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = ct.out_channels
        k, s, p, op = ct.kernel_size[0], ct.stride[0], ct.padding[0], ct.output_padding[0]
        oh, ow = (h - 1) * s - 2 * p + k + op, (w - 1) * s - 2 * p + k + op
        out = torch.empty((n, c, 1, 1), device=x.device, dtype=x.dtype)
        _fused_kernel[(n,)](x, ct.weight, ct.bias, out, c_in, c, h, w, oh, ow, float(self.multiplier), K=k, S=s,
                            P=p, BLOCK_H=triton.next_power_of_2(h), BLOCK_W=triton.next_power_of_2(w),
                            BLOCK_CO=triton.next_power_of_2(c), num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            v = torch.mean(self.conv_transpose(x) * self.multiplier, dim=[2, 3], keepdim=True)
            return torch.mean(v, dim=[2, 3], keepdim=True)
        return self._triton(x)
