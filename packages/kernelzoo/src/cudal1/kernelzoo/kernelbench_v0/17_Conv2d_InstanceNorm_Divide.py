"""KernelBench level 2, 17_Conv2d_InstanceNorm_Divide (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16,
30, 30); InstanceNorm2d(16) (no affine, no running statistics); ``/ 2.0``).

ONE Triton kernel does the whole forward, the convolution included: one program per sample computes all 16
channels x 900 positions of the conv in fp32 registers (direct 3-input-channel conv from
``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), adds the conv bias, takes each channel's mean and
the biased variance of the centred values (as instance norm), normalises, divides and writes the output once.
Replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy
of host time, against eager's conv (+ bias), instance norm (several kernels) and div launches. Other configurations
(affine or tracked statistics, larger planes, other convs) run the PyTorch form. What remains is three launches of
host time, a little GPU work and the 7.4 MB write.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW, eps, div,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    mask = cmask[:, None] & pmask[None, :]
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    mean = tl.sum(tl.where(mask, v, 0.0), 1) / npos
    d = tl.where(mask, v - mean[:, None], 0.0)
    var = tl.sum(d * d, 1) / npos
    y = d / tl.sqrt(var + eps)[:, None] / div
    offs = (n * C + c).to(tl.int64)[:, None] * npos + p[None, :]
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by
        self._graph = CUDAGraphForward(self._forward)

    def _fits(self, x: torch.Tensor) -> bool:
        inorm, k = self.instance_norm, self.conv.kernel_size[0]
        if not (direct_ok(self.conv, x) and not inorm.affine and not inorm.track_running_stats):
            return False
        npos = (x.shape[2] - k + 1) * (x.shape[3] - k + 1)
        return triton.next_power_of_2(npos) * triton.next_power_of_2(self.conv.out_channels) <= 16384

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c, k = conv.out_channels, conv.kernel_size[0]
        oh, ow = h - k + 1, w - k + 1
        out = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
        block_c, block_p = triton.next_power_of_2(c), triton.next_power_of_2(oh * ow)
        _fused_kernel[(n,)](x, conv.weight, conv.bias, out, c_in, h, w, c, oh, ow, float(self.instance_norm.eps),
                            float(self.divide_by), K=k, BLOCK_C=block_c, BLOCK_P=block_p,
                            num_warps=8 if block_c * block_p >= 8192 else 4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        return self.instance_norm(self.conv(x)) / self.divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
