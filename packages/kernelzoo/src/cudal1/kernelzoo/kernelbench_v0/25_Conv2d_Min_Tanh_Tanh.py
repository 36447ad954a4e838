"""KernelBench level 2, 25_Conv2d_Min_Tanh_Tanh (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) ->
(128, 16, 30, 30), 7.4 MB; min over the 16 channels, tanh, tanh -> (128, 1, 30, 30)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as
a cuDNN implicit-GEMM launch plus a bias pass. Each program computes a (16 channels, 256 positions) tile of one
sample in fp32 registers (direct convolution, plain FMAs, no TF32), adds the conv bias, takes the channel min
in registers, applies tanh twice and writes the (128, 1, 30, 30) result (0.46 MB); the 7.4 MB conv output is
never written. Eager: conv, bias pass, min reduction, two tanh: 5 kernels, mostly launch time. One launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh(x):
    t = 1.0 - 2.0 / (tl.exp(2.0 * tl.abs(x)) + 1.0)
    return tl.where(x < 0, -t, t)


@triton.jit
def _conv_tile(x_ptr, w_ptr, n, c, cmask, oh, ow, pmask, C_IN, H, W, K: tl.constexpr,
               BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """Direct stride-1, unpadded conv: (BLOCK_C out channels, BLOCK_P output positions) of sample n, fp32 FMAs."""
    acc = tl.zeros([BLOCK_C, BLOCK_P], tl.float32)
    for ci in range(C_IN):
        xb = x_ptr + (n * C_IN + ci).to(tl.int64) * H * W
        wb = w_ptr + (c * C_IN + ci) * (K * K)
        for kh in tl.static_range(K):
            for kw in tl.static_range(K):
                xv = tl.load(xb + (oh + kh) * W + ow + kw, mask=pmask, other=0.0)
                wv = tl.load(wb + kh * K + kw, mask=cmask, other=0.0)
                acc += wv[:, None] * xv[None, :]
    return acc


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = _conv_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    m = tl.min(tl.where(cmask[:, None], v, float("inf")), 0)
    tl.store(out_ptr + n.to(tl.int64) * npos + p, _tanh(_tanh(m)), mask=pmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        oh, ow = h - k + 1, w - k + 1
        out = torch.empty((n, 1, oh, ow), device=x.device, dtype=x.dtype)
        block_p = min(256, triton.next_power_of_2(oh * ow))
        _fused_kernel[(n, triton.cdiv(oh * ow, block_p))](x, conv.weight, conv.bias, out, c_in, h, w, c, oh, ow,
                                                          K=k, BLOCK_C=triton.next_power_of_2(c), BLOCK_P=block_p,
                                                          num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            return torch.tanh(torch.tanh(torch.min(self.conv(x), dim=1, keepdim=True)[0]))
        return self._triton(x)
