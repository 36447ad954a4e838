"""KernelBench level 3, 26_ShuffleNet, second version: the first version's kernels with the whole forward replayed
as ONE CUDA graph.

Task: x (10, 3, 224, 224) fp32 -> (10, 1000); 3x3 stem conv stride 2 + BatchNorm + ReLU, 3x3 max pool stride 2,
then 3 + 7 + 3 ShuffleNet units at 56x56 (240 / 480 / 960 channels; each: grouped 1x1 conv + BN + ReLU,
depthwise 3x3 conv + BN, channel shuffle, grouped 1x1 conv + BN + ReLU, plus the identity or 1x1 conv + BN
shortcut), 1x1 conv 960 -> 1024 + BN + ReLU, global average pool, Linear. Eval mode: every batch norm is the
affine map of its running statistics.

The kernels are the first version's (``cudal1.kernelzoo.blocks.shufflenet`` and ``bn_act``): cuDNN fp32 convs,
batch norm 1 + ReLU as one pass, batch norm 2 + channel shuffle as one pass, relu(bn3(a)) + shortcut (with its
batch norm) as one pass, the head's batch norm + ReLU + average pool as one read. That version ran about 100
launches a call (a third of them Triton launches, each costly in host time). Here ``_forward`` is captured once
(``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``) and each call is three launches: the 6 MB input copy,
the replay, the (10, 1000) output clone. Folding a batch norm into its convolution would not remove a pass here:
cuDNN adds a conv bias as a separate pass, and each batch norm already rides in a pass that runs anyway (ReLU,
the shuffle, or the shortcut add).
The gain is modest: the units are GPU-bound (tensors of 30-120 MB at 56x56); the graph removes the host launch
time, of which only the part not hidden behind the GPU counts (the stem, the small head, the launch gaps between
short kernels).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import RELU, bn_act
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
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
        self._graph = CUDAGraphForward(self._forward)

    @staticmethod
    def _make_stage(in_channels, out_channels, repeats, groups):
        return nn.Sequential(ShuffleNetUnit(in_channels, out_channels, groups),
                             *[ShuffleNetUnit(out_channels, out_channels, groups) for _ in range(1, repeats)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        """The first version's forward: device work only (no host syncs; shapes fixed by the input's)."""
        x = self.maxpool(bn_act(self.conv1(x), self.bn1, RELU))
        x = self.stage4(self.stage3(self.stage2(x)))
        return self.fc(bn_relu_mean(self.conv5(x), self.bn5))
