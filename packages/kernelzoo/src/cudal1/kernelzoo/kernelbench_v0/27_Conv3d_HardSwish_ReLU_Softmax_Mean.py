"""KernelBench level 2, 27_Conv3d_HardSwish_ReLU_Softmax_Mean (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16,
k=3) -> (128, 16, 14, 30, 30), 103 MB; hardswish, relu, softmax over the 16 channels, mean over the spatial
dims -> (128, 16)).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32) and one Triton kernel
does everything after it: each program loads a (16 channels, BLOCK_S positions) slab of one sample (channel
rows contiguous, coalesced), adds the conv bias, applies hardswish and relu, takes the channel softmax in
registers and adds its per-channel sums over the tile, divided by the spatial size, into the (128, 16) output
with atomics (fp32 sums in another order). One read of the conv output, nothing written but 8 KB. Eager makes
a bias pass and hardswish, relu, softmax (each read + write 103 MB) and a mean pass: about 0.9 GB against our
0.1 GB.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _act_softmax_mean_kernel(y_ptr, cb_ptr, out_ptr, n_ch, inner, inv_inner,
                             BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    n = tl.program_id(1)
    c = tl.arange(0, BLOCK_C)
    cmask = c < n_ch
    smask = s < inner
    mask = cmask[:, None] & smask[None, :]
    offs = n.to(tl.int64) * n_ch * inner + c[:, None] * inner + s[None, :]
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = v * tl.minimum(tl.maximum(v + 3.0, 0.0), 6.0) / 6.0  # hardswish
    v = tl.maximum(v, 0.0)
    v = tl.where(cmask[:, None], v, -float("inf"))
    e = tl.exp(v - tl.max(v, 0)[None, :])
    p = tl.where(mask, e / tl.sum(e, 0)[None, :], 0.0)
    tl.atomic_add(out_ptr + n * n_ch + c, tl.sum(p, 1) * inv_inner, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            v = torch.relu(F.hardswish(conv(x)))
            return torch.softmax(v, dim=1).mean(dim=[2, 3, 4])
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c = y.shape[0], y.shape[1]
        inner = y[0, 0].numel()
        cb = conv.bias if conv.bias is not None else torch.zeros(c, device=y.device, dtype=y.dtype)
        out = torch.zeros((n, c), device=y.device, dtype=y.dtype)
        block_c = triton.next_power_of_2(c)
        block_s = max(32, min(1024, 8192 // block_c))
        _act_softmax_mean_kernel[(triton.cdiv(inner, block_s), n)](y, cb, out, c, inner, 1.0 / inner,
                                                                  BLOCK_C=block_c, BLOCK_S=block_s, num_warps=8)
        return out
