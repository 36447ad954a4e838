"""KernelBench level 3, 27_RegNet (x: (8, 3, 224, 224) fp32; 3 stages of [3x3 conv + BatchNorm + ReLU, 3x3 conv +
BatchNorm + ReLU, 2x2 max pool] with widths 64 / 128 / 256 at 224 / 112 / 56, global average pool, Linear ->
(8, 10)). The harness evaluates both models in eval mode, so every batch norm is the per-channel affine map of its
running statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager reads and writes every conv output three times outside the convolutions (batch norm, ReLU, and for the
second conv of a stage the max pool reading it again): ~1.7 GB of elementwise traffic, most of it on the 103 MB
stage-1 tensors. Here the convolutions stay cuDNN fp32 (no TF32); the first conv's batch norm + ReLU is ONE Triton
pass (``cudal1.kernelzoo.blocks.bn_act``) and the second conv's batch norm + ReLU + 2x2 max pool is ONE Triton
pass that reads the conv output once and writes only the pooled quarter (each of the four values is normalised
and rectified before the max, so a negative batch-norm scale is handled). ~0.6 GB of traffic instead of ~1.7 GB, 6 launches fewer.
Expected: ~1.1x (eager reference 4.4 ms on an H100; the fp32 3x3 convolutions are most of it).
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.bn_act import RELU, bn_act


@triton.jit
def _bn_relu_max2_kernel(x_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, H, W, OH, OW, BLOCK: tl.constexpr):
    """y[n, c, i, j] = max over the 2x2 window at (2i, 2j) of relu(bn(x)) (MaxPool2d(2) floors odd sizes)."""
    pid = tl.program_id(0)
    c = pid % C
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    shift = tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < OH * OW
    base = x_ptr + pid.to(tl.int64) * H * W + (offs // OW) * 2 * W + (offs % OW) * 2
    v = tl.maximum(tl.load(base, mask=m, other=0.0) * scale + shift,
                   tl.load(base + 1, mask=m, other=0.0) * scale + shift)
    v = tl.maximum(v, tl.load(base + W, mask=m, other=0.0) * scale + shift)
    v = tl.maximum(v, tl.load(base + W + 1, mask=m, other=0.0) * scale + shift)
    tl.store(y_ptr + pid.to(tl.int64) * (OH * OW) + offs, tl.maximum(v, 0.0), mask=m)


def bn_relu_max2(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    """max_pool2d(relu(bn(x)), 2) in one pass (running statistics)."""
    if not (x.is_cuda and x.dtype == torch.float32 and bn.affine and bn.running_mean is not None):
        return F.max_pool2d(F.relu(F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0,
                                                bn.eps)), 2, 2)
    x = x.contiguous()
    n, c, h, w = x.shape
    oh, ow = h // 2, w // 2
    y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
    block = min(1024, triton.next_power_of_2(max(oh * ow, 1)))
    _bn_relu_max2_kernel[(n * c, triton.cdiv(oh * ow, block))](x, y, bn.running_mean, bn.running_var, bn.weight,
                                                               bn.bias, bn.eps, c, h, w, oh, ow, BLOCK=block,
                                                               num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, input_channels, stages, block_widths, output_classes):
        super().__init__()
        self.stages = stages
        self.block_widths = block_widths
        layers = []
        current_channels = input_channels
        for i in range(stages):
            layers.append(self._make_stage(current_channels, block_widths[i]))
            current_channels = block_widths[i]
        self.feature_extractor = nn.Sequential(*layers)
        self.fc = nn.Linear(block_widths[-1], output_classes)

    @staticmethod
    def _make_stage(in_channels, out_channels):
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for stage in self.feature_extractor:
            x = bn_act(stage[0](x), stage[1], RELU)
            x = bn_relu_max2(stage[3](x), stage[4])
        return self.fc(torch.mean(x, dim=[2, 3]))
