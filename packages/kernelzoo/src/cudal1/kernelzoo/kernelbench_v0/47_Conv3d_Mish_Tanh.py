"""KernelBench level 2, 47_Conv3d_Mish_Tanh (x: (16, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3) -> (16, 16, 14,
30, 30), 12.9 MB; mish; tanh).

One Triton kernel does the whole forward, the 3-D convolution included (direct conv, ``conv3d_tile`` from
``cudal1.kernelzoo.blocks.direct_conv``: 81 plain fp32 FMAs per output, no TF32; bias, mish and tanh in registers,
one write of the 12.9 MB output), replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy,
one graph launch and one output copy of host time. The earlier single-launch version (no graph) was no faster
than eager: its Triton launch from Python cost about the host time of eager's conv, mish and tanh launches.
What remains: three launches of host time, the 12.9 MB write and its copy out.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import conv3d_tile, direct_ok, mish, pos_block, tanh


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, D, H, W, C, OD, OH, OW,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    plane = OH * OW
    npos = OD * plane
    pmask = p < npos
    od = p // plane
    r = p % plane
    v = conv3d_tile(x_ptr, w_ptr, n, c, cmask, od, r // OW, r % OW, pmask, C_IN, D, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, tanh(mish(v)), mask=cmask[:, None] & pmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, d, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        od, oh, ow = d - k + 1, h - k + 1, w - k + 1
        out = torch.empty((n, c, od, oh, ow), device=x.device, dtype=x.dtype)
        npos = od * oh * ow
        block_p = pos_block(npos)
        _fused_kernel[(n, triton.cdiv(npos, block_p))](
            x, conv.weight, conv.bias, out, c_in, d, h, w, c, od, oh, ow,
            K=k, BLOCK_C=triton.next_power_of_2(c), BLOCK_P=block_p, num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return torch.tanh(F.mish(self.conv(x)))
        return self._triton(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
