"""KernelBench level 2, 82_Conv2d_Tanh_Scaling_BiasAdd_Max (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) ->
(128, 16, 30, 30), 7.4 MB; tanh, ``* scaling_factor``, ``+ bias`` (16, 1, 1), MaxPool2d(2) -> (128, 16, 15, 15)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass. Each program computes, for 128 pooled positions of one sample and all
16 channels, the conv at the offsets of each pool window in fp32 registers (direct convolution, plain FMAs, no
TF32), adds the conv bias, applies the pre-pool tail and folds the window, then the post-pool tail, and writes only
the pooled result (1.8 MB); the 7.4 MB conv output is never written. Eager: conv, bias pass, tanh, mul, add, pool:
6 kernels, mostly launches. One launch here.

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
def _fused_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, out_ptr, C_IN, H, W, C, PH, PW, sf,
                  K: tl.constexpr, PK: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_Q: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    q = tl.program_id(1) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    nq = PH * PW
    qmask = q < nq
    ph = q // PW
    pw = q % PW
    cb = tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    b = tl.load(b_ptr + c, mask=cmask, other=0.0)[:, None]
    best = tl.full([BLOCK_C, BLOCK_Q], -float("inf"), tl.float32)
    for dh in tl.static_range(PK):
        for dw in tl.static_range(PK):
            v = _conv_tile(x_ptr, w_ptr, n, c, cmask, ph * PK + dh, pw * PK + dw, qmask, C_IN, H, W, K,
                           BLOCK_C, BLOCK_Q)
            best = tl.maximum(best, _tanh(v + cb) * sf + b)
    offs = (n * C + c).to(tl.int64)[:, None] * nq + q[None, :]
    tl.store(out_ptr + offs, best, mask=cmask[:, None] & qmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scaling_factor = scaling_factor
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.max_pool = nn.MaxPool2d(pool_kernel_size)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        pk = self.max_pool.kernel_size
        ph, pw = (h - k + 1) // pk, (w - k + 1) // pk
        out = torch.empty((n, c, ph, pw), device=x.device, dtype=x.dtype)
        block_q = min(128, triton.next_power_of_2(max(ph * pw, 1)))
        _fused_kernel[(n, triton.cdiv(ph * pw, block_q))](
            x, conv.weight, conv.bias, self.bias, out, c_in, h, w, c, ph, pw, float(self.scaling_factor), K=k, PK=pk,
            BLOCK_C=triton.next_power_of_2(c), BLOCK_Q=block_q, num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            return self.max_pool(torch.tanh(self.conv(x)) * self.scaling_factor + self.bias)
        return self._triton(x)
