"""KernelBench level 2, 32_Conv2d_Scaling_Min (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16, 30,
30); ``* scale_factor``; min over the 16 channels -> (128, 1, 30, 30)).

One Triton kernel does the whole forward, the convolution included (direct 3-input-channel conv from
``cudal1.kernelzoo.blocks.direct_conv``, plain fp32 FMAs, no TF32; every channel of a position in one tile, so
bias, scale (per element: a negative factor is handled) and the channel min stay in registers and only the
(128, 1, 30, 30) result is written), replayed through a CUDA graph (``CUDAGraphForward``): per call one input
copy, one graph launch and one output copy of host time. The earlier single-launch version (no graph) was no
faster than eager.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, launch_conv2d_tail


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, OH, OW, scale,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    v = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    v += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    m = tl.min(tl.where(cmask[:, None], v * scale, float("inf")), 0)
    tl.store(out_ptr + n.to(tl.int64) * npos + p, m, mask=pmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        # every channel in one tile: bound the positions per program
        return launch_conv2d_tail(_fused_kernel, self.conv, x, scalars=(float(self.scale_factor),), out_channels=1,
                                  pos_cap=max(16, 4096 // triton.next_power_of_2(self.conv.out_channels)))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if not direct_ok(self.conv, x):
            return torch.amin(self.conv(x) * self.scale_factor, dim=1, keepdim=True)
        return self._triton(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
