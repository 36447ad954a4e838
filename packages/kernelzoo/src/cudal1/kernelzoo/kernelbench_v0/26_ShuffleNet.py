"""KernelBench level 3, 26_ShuffleNet (x: (10, 3, 224, 224) fp32; 3x3 stem conv stride 2 + BatchNorm + ReLU, 3x3
max pool stride 2, then 3 + 7 + 3 ShuffleNet units at 56x56 (240 / 480 / 960 channels, all stride 1; each: grouped
1x1 conv + BN + ReLU, depthwise 3x3 conv + BN, channel shuffle, grouped 1x1 conv + BN + ReLU, plus the identity or
1x1 conv + BN shortcut), 1x1 conv 960 -> 1024 + BN + ReLU, global average pool, Linear -> (10, 1000)). The harness
evaluates both models in eval mode, so every batch norm is the per-channel affine map of its running statistics
(the fallback path uses ``F.batch_norm(training=False)`` too).

Eager makes a separate full pass for every elementwise step of every unit: on the unit's output tensors (up to
120 MB each in stage 4) batch norm 3, ReLU, the shortcut batch norm and the in-place add, and on the mid tensors
batch norm 1, ReLU, batch norm 2 and the shuffle's transpose copy. Here the convolutions stay cuDNN fp32 (no TF32)
and everything between them is fused (``cudal1.kernelzoo.blocks.shufflenet``): batch norm 1 + ReLU is one pass;
batch norm 2 + the channel shuffle is one pass (each plane written straight to its shuffled channel); and
relu(bn3(a)) + shortcut (or + bn_s(shortcut conv)) is one pass (two reads, one write). The stem's batch norm +
ReLU is one pass, and the head's batch norm + ReLU + global average pool is one read of the 128 MB conv5 output.
About 45% of eager's elementwise traffic is removed (~9 GB of ~20 GB over the 13 units).
Expected: ~1.2-1.3x (eager reference 16.9 ms on an H100).
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import RELU, bn_act
from cudal1.kernelzoo.blocks.shufflenet import ShuffleNetUnit, bn_relu_mean


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000, groups=3, stages_repeats=(3, 7, 3),
                 stages_out_channels=(24, 240, 480, 960)):
        super().__init__()
        self.conv1 = nn.Conv2d(3, stages_out_channels[0], kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(stages_out_channels[0])
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.stage2 = self._make_stage(stages_out_channels[0], stages_out_channels[1], stages_repeats[0], groups)
        self.stage3 = self._make_stage(stages_out_channels[1], stages_out_channels[2], stages_repeats[1], groups)
        self.stage4 = self._make_stage(stages_out_channels[2], stages_out_channels[3], stages_repeats[2], groups)
        self.conv5 = nn.Conv2d(stages_out_channels[3], 1024, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn5 = nn.BatchNorm2d(1024)
        self.fc = nn.Linear(1024, num_classes)

    @staticmethod
    def _make_stage(in_channels, out_channels, repeats, groups):
        return nn.Sequential(ShuffleNetUnit(in_channels, out_channels, groups),
                             *[ShuffleNetUnit(out_channels, out_channels, groups) for _ in range(1, repeats)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(bn_act(self.conv1(x), self.bn1, RELU))
        x = self.stage4(self.stage3(self.stage2(x)))
        return self.fc(bn_relu_mean(self.conv5(x), self.bn5))
