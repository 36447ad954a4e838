"""KernelBench level 3, 22_EfficientNetB0 (x: (10, 3, 224, 224) fp32 -> (10, 1000); stem 3x3 conv stride 2 +
BatchNorm + ReLU, 13 MBConv blocks (1x1 expand + BN + ReLU6, depthwise 3x3/5x5 + BN + ReLU6, 1x1 project + BN,
residual add where stride 1 and widths match), 1x1 conv 320 -> 1280 + BN + ReLU, global average pool, Linear).
The harness evaluates both models in eval mode, so every batch norm is the per-channel affine map of its running
statistics.

Eager launches ~150 small kernels (every conv, batch norm, activation and residual add its own launch, each
costing host time) while the GPU work per kernel is tiny at these sizes: the task is launch-bound. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it, each batch norm with its activation (and the block's residual add) is ONE Triton pass
  (``cudal1.kernelzoo.blocks.bn_act``, statistics read from the buffers on every replay, so nothing is cached),
  the convolutions stay cuDNN fp32: ~45 fewer kernels and one full read+write fewer per BN/activation pair.

The graph should run in roughly the GPU time of the kernels, the fused passes saving a further part of the
elementwise traffic.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import NONE, RELU, RELU6, bn_act
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward

# (in, out, kernel, stride, expand) of the 13 blocks, as the task builds them
_BLOCKS = [(32, 16, 3, 1, 1), (16, 24, 3, 2, 6), (24, 24, 3, 1, 6), (24, 40, 5, 2, 6), (40, 40, 5, 1, 6),
           (40, 80, 3, 2, 6), (80, 80, 3, 1, 6), (80, 112, 5, 1, 6), (112, 112, 5, 1, 6), (112, 192, 5, 2, 6),
           (192, 192, 5, 1, 6), (192, 192, 5, 1, 6), (192, 320, 3, 1, 6)]


class MBConv(nn.Module):
    """The task's MBConv block (same submodule and parameter names), each BN + activation as one pass."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, expand_ratio):
        super().__init__()
        self.use_residual = stride == 1 and in_channels == out_channels
        self.has_expand = expand_ratio != 1
        hidden = in_channels * expand_ratio
        if self.has_expand:
            self.expand_conv = nn.Sequential(nn.Conv2d(in_channels, hidden, 1, 1, 0, bias=False),
                                             nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True))
        self.depthwise_conv = nn.Sequential(
            nn.Conv2d(hidden, hidden, kernel_size, stride, (kernel_size - 1) // 2, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True))
        self.project_conv = nn.Sequential(nn.Conv2d(hidden, out_channels, 1, 1, 0, bias=False),
                                          nn.BatchNorm2d(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        if self.has_expand:
            x = bn_act(self.expand_conv[0](x), self.expand_conv[1], RELU6)
        x = bn_act(self.depthwise_conv[0](x), self.depthwise_conv[1], RELU6)
        return bn_act(self.project_conv[0](x), self.project_conv[1], NONE, identity if self.use_residual else None)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.blocks = nn.Sequential(*[MBConv(*b) for b in _BLOCKS])
        self.conv2 = nn.Conv2d(320, 1280, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.fc = nn.Linear(1280, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = bn_act(self.conv1(x), self.bn1, RELU)
        x = self.blocks(x)
        x = bn_act(self.conv2(x), self.bn2, RELU)
        return self.fc(x.mean(dim=(2, 3)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
