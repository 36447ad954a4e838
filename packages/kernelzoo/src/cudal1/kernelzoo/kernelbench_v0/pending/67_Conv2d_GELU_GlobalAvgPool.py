"""KernelBench level 2, 67_Conv2d_GELU_GlobalAvgPool (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128,
16, 30, 30), 7.4 MB; exact (erf) GELU; global average pool -> (128, 16)). Second version of the set's file.

The same single Triton kernel for the whole model (direct convolution from ``cudal1.kernelzoo.blocks.direct_conv``,
plain FMAs, no TF32; conv bias, GELU, each channel's positions summed in registers; the conv output never reaches
memory; deterministic), spread over more programs: one per (sample, group of ``CHANNELS_PER_PROGRAM`` output
channels) instead of one per sample. The set's version runs 128 programs on a GPU of 132 multiprocessors, one
program of 8 warps each, and is latency-bound; CUDA-L1's file for this task, whose own kernel never builds, runs
cuDNN's convolution, GELU and a mean as three eager kernels and read faster
(benchmarks/results/2026-12-05-cuda-l1-faster-tasks-cpu.md). Here 4 channels a program: 512 programs of 4 warps,
each (4, 1024) register tile a quarter of the set's, so several programs share a multiprocessor and hide each
other's load latency. Each program reads its sample's whole input (36 KB, from L2 after the first of the four).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, gelu, pos_block

CHANNELS_PER_PROGRAM = 4  #: output channels a program computes (a power of two)


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = c < C
    cb = tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    npos = OH * OW
    acc = tl.zeros([BLOCK_C], tl.float32)
    for p0 in range(0, npos, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        pmask = p < npos
        v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
        g = gelu(v + cb)
        acc += tl.sum(tl.where(pmask[None, :], g, 0.0), axis=1)
    tl.store(out_ptr + n * C + c, acc / npos, mask=cmask)


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
        out = torch.empty((n, c), device=x.device, dtype=x.dtype)
        block_c = min(CHANNELS_PER_PROGRAM, triton.next_power_of_2(c))
        _fused_kernel[(n, triton.cdiv(c, block_c))](x, conv.weight, conv.bias, out, c_in, h, w, c, oh, ow, K=k,
                                                   BLOCK_C=block_c, BLOCK_P=pos_block(oh * ow, 1024), num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return F.adaptive_avg_pool2d(F.gelu(self.conv(x)), 1).squeeze(-1).squeeze(-1)
        return self._triton(x)
