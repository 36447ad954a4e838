"""KernelBench level 2, 46_Conv2d_Subtract_Tanh_Subtract_AvgPool (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3)
-> (128, 16, 30, 30), 7.4 MB; ``- subtract1_value``, tanh, ``- subtract2_value``, AvgPool2d(2) -> (128, 16, 15,
15)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output (50 MFMA for the batch): nothing for the GPU, but eager runs it as a
cuDNN implicit-GEMM launch plus a bias pass, then sub, tanh, sub and the pool, each a full pass over the 7.4 MB
conv output. Each program computes, for 128 pooled positions of one sample and all 16 channels, the conv at each
offset of the pool window in fp32 registers (direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``, plain
FMAs, no TF32; the windows do not overlap, so every conv output is computed once), adds the conv bias, applies
``tanh(v - s1) - s2``, sums the window in the pool's order and divides by its size, and writes only the pooled
result (1.8 MB). Eager: 6 kernels, launch-bound. One launch here, as in
the single-launch conv+pool files 35_ and 82_.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, pos_block, tanh


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, PH, PW, s1, s2,
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
    acc = tl.zeros([BLOCK_C, BLOCK_Q], tl.float32)
    for dh in tl.static_range(PK):
        for dw in tl.static_range(PK):
            v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, ph * PK + dh, pw * PK + dw, qmask, C_IN, H, W, K,
                            BLOCK_C, BLOCK_Q)
            acc += tanh(v + cb - s1) - s2
    offs = (n * C + c).to(tl.int64)[:, None] * nq + q[None, :]
    tl.store(out_ptr + offs, acc / (PK * PK), mask=cmask[:, None] & qmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract1_value, subtract2_value, kernel_size_pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract1_value = subtract1_value
        self.subtract2_value = subtract2_value
        self.avgpool = nn.AvgPool2d(kernel_size_pool)

    def _pool_ok(self) -> bool:
        """The kernel's pool: square window, stride = window, no padding, floor mode."""
        p = self.avgpool
        return (isinstance(p.kernel_size, int) and p.stride in (None, p.kernel_size) and p.padding == 0
                and not p.ceil_mode and p.divisor_override is None)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        pk = self.avgpool.kernel_size
        ph, pw = (h - k + 1) // pk, (w - k + 1) // pk
        out = torch.empty((n, c, ph, pw), device=x.device, dtype=x.dtype)
        block_q = pos_block(ph * pw, 128)
        _fused_kernel[(n, triton.cdiv(ph * pw, block_q))](
            x, conv.weight, conv.bias, out, c_in, h, w, c, ph, pw, float(self.subtract1_value),
            float(self.subtract2_value), K=k, PK=pk, BLOCK_C=triton.next_power_of_2(c), BLOCK_Q=block_q,
            num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x) or not self._pool_ok():
            v = torch.tanh(self.conv(x) - self.subtract1_value) - self.subtract2_value
            return self.avgpool(v)
        return self._triton(x)
