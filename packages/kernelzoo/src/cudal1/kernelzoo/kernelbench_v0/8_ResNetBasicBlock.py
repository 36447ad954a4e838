"""KernelBench level 3, 8_ResNetBasicBlock, second version: the downsample 1x1 conv (3 input channels) and its
batch norm computed inside the block's final pass instead of by cuDNN into a 128 MB tensor (no CUDA graph: see
below).

Task: x (10, 3, 224, 224) fp32 -> (10, 64, 224, 224); conv3x3 3 -> 64 + BatchNorm + ReLU, conv3x3 64 -> 64 +
BatchNorm, plus the downsample 1x1 conv 3 -> 64 + BatchNorm, add, ReLU. Eval mode: every batch norm is the affine
map of its running statistics.

The first version ran the three convolutions in cuDNN fp32
and two Triton passes: relu(bn1(a)) and relu(bn2(b) + bn_d(downsample conv)). The downsample conv has only 3 input
channels: 3 multiply-adds an output value, against writing and re-reading its 128 MB output (plus a launch).
Here the final Triton pass computes it in place: for each output plane (n, co) it reads the
conv2 output once and the 3 input planes of image n (6 MB per call for the whole input, L2-resident after the
first reads), and writes relu(bn2(b) + s_d * (sum_ci w_d[co, ci] * x[n, ci, stride * (i, j)]) + t_d), s_d and t_d
from bn_d's running statistics in the kernel (the batch norm folded onto the 1x1 product; nothing cached).
conv1 + relu(bn1) is the first version's (cuDNN + one ``bn_act`` pass); conv2 stays cuDNN fp32.
Why no CUDA graph: four launches against far more GPU work (the host is never the bottleneck), and
``CUDAGraphForward`` would add a 128 MB output clone. Folding bn1/bn2 into conv1/conv2 weights gains
nothing: cuDNN adds a conv bias as a separate pass, the same traffic as the fused passes.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.bn_act import RELU, bn_act


@triton.jit
def _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps):
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    return scale, tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale


@triton.jit
def _bn_add_down_relu_kernel(a_ptr, x_ptr, wd_ptr, y_ptr, rm, rv, g, b, eps, rmd, rvd, gd, bd, epsd,
                             C, CIN, H, W, OH, OW, STRIDE, BLOCK: tl.constexpr):
    """y[n, co] = relu(bn(a[n, co]) + bn_d(sum_ci wd[co, ci] * x[n, ci, ::STRIDE, ::STRIDE])) for BLOCK pixels of
    plane (n, co); a and y are (N, C, OH, OW), x is (N, CIN, H, W)."""
    pid = tl.program_id(0)
    n = pid // C
    co = pid % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < OH * OW
    src = (offs // OW) * STRIDE * W + (offs % OW) * STRIDE
    d = tl.zeros((BLOCK,), dtype=tl.float32)
    xb = x_ptr + n.to(tl.int64) * CIN * H * W
    for ci in range(CIN):
        d += tl.load(wd_ptr + co * CIN + ci) * tl.load(xb + ci * H * W + src, mask=m, other=0.0)
    s, t = _bn_scale_shift(co, rm, rv, g, b, eps)
    sd, td = _bn_scale_shift(co, rmd, rvd, gd, bd, epsd)
    base = pid.to(tl.int64) * (OH * OW) + offs
    v = tl.load(a_ptr + base, mask=m, other=0.0) * s + t + (d * sd + td)
    tl.store(y_ptr + base, tl.maximum(v, 0.0), mask=m)


def bn_add_down_relu(a: torch.Tensor, bn: nn.BatchNorm2d, x: torch.Tensor, conv_d: nn.Conv2d,
                     bn_d: nn.BatchNorm2d) -> torch.Tensor:
    """relu(bn(a) + bn_d(conv_d(x))) for a 1x1 ``conv_d`` without bias, in one pass (the 1x1 product in-kernel)."""
    ok = (a.is_cuda and a.dtype == torch.float32 and x.dtype == a.dtype and conv_d.bias is None
          and conv_d.kernel_size == (1, 1) and conv_d.padding == (0, 0) and conv_d.groups == 1
          and conv_d.stride[0] == conv_d.stride[1] and x.shape[1] <= 16
          and all(m.affine and m.running_mean is not None for m in (bn, bn_d)))
    if not ok:
        return bn_act(a, bn, RELU, conv_d(x), bn_d)
    a, x = a.contiguous(), x.contiguous()
    n, c, oh, ow = a.shape
    cin, h, w = x.shape[1:]
    y = torch.empty_like(a)
    block = min(1024, triton.next_power_of_2(oh * ow))
    _bn_add_down_relu_kernel[(n * c, triton.cdiv(oh * ow, block))](
        a, x, conv_d.weight.contiguous(), y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps,
        bn_d.running_mean, bn_d.running_var, bn_d.weight, bn_d.bias, bn_d.eps, c, cin, h, w, oh, ow,
        conv_d.stride[0], BLOCK=block, num_warps=4)
    return y


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion))
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act(F.conv2d(x, self.conv1.weight, None, self.conv1.stride, 1), self.bn1, RELU)
        return bn_add_down_relu(self.conv2(out), self.bn2, x, self.downsample[0], self.downsample[1])
