"""KernelBench level 3, 24_EfficientNetB2 (x: (2, 3, 224, 224) fp32 -> (2, 1000); stem 3x3 conv stride 2 + BN +
ReLU, 5 blocks ``mbconv1..5`` (each an ``nn.Sequential``: 1x1 expand + BN + ReLU, depthwise 3x3 + BN + ReLU, then
the task's squeeze-excitation layers applied *in sequence*: global average pool, 1x1 conv C -> C/4, ReLU, 1x1 conv
C/4 -> C, sigmoid, 1x1 conv -> out + BN; so from the first block's pool on every tensor is 1x1 spatially),
1x1 conv 384 -> 1408 + BN + ReLU, average pool, Linear). The harness evaluates both models in eval mode, so every
batch norm is the per-channel affine map of its running statistics.

Eager launches ~80 kernels for very little GPU work (after the first block's pool everything is (2, C, 1, 1)):
launch-bound. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it, each batch norm with its activation is ONE Triton pass (``cudal1.kernelzoo.blocks.bn_act``, running
  statistics read on every replay, nothing cached); ReLU / sigmoid of the squeeze-excitation run in place; the
  convolutions stay cuDNN fp32.

The graph should run in about the GPU time of its ~60 tiny kernels plus the stem.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import NONE, RELU, bn_act
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


def _mbconv(in_channels: int, out_channels: int, stride: int, expand_ratio: int) -> nn.Sequential:
    """The task's block layout: [conv, BN, ReLU,] depthwise conv, BN, ReLU, pool, conv, ReLU, conv, sigmoid,
    conv, BN (same indices, so the same parameter names)."""
    c = in_channels * expand_ratio
    layers: list[nn.Module] = []
    if expand_ratio != 1:
        layers += [nn.Conv2d(in_channels, c, 1, 1, 0, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
    layers += [nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True),
               nn.AdaptiveAvgPool2d((1, 1)),
               nn.Conv2d(c, c // 4, 1, 1, 0, bias=False), nn.ReLU(inplace=True),
               nn.Conv2d(c // 4, c, 1, 1, 0, bias=False), nn.Sigmoid(),
               nn.Conv2d(c, out_channels, 1, 1, 0, bias=False), nn.BatchNorm2d(out_channels)]
    return nn.Sequential(*layers)


def _run_mbconv(block: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    i = 3 if len(block) == 13 else 0  # with or without the expansion layers
    if i:
        x = bn_act(block[0](x), block[1], RELU)
    x = bn_act(block[i](x), block[i + 1], RELU)
    x = x.mean(dim=(2, 3), keepdim=True)
    x = torch.relu_(block[i + 4](x))
    x = torch.sigmoid_(block[i + 6](x))
    return bn_act(block[i + 8](x), block[i + 9], NONE)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU(inplace=True)
        self.mbconv1 = _mbconv(32, 96, 1, 3)
        self.mbconv2 = _mbconv(96, 144, 2, 6)
        self.mbconv3 = _mbconv(144, 192, 2, 6)
        self.mbconv4 = _mbconv(192, 288, 2, 6)
        self.mbconv5 = _mbconv(288, 384, 1, 6)
        self.conv_final = nn.Conv2d(384, 1408, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn_final = nn.BatchNorm2d(1408)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(1408, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = bn_act(self.conv1(x), self.bn1, RELU)
        for block in (self.mbconv1, self.mbconv2, self.mbconv3, self.mbconv4, self.mbconv5):
            x = _run_mbconv(block, x)
        x = bn_act(self.conv_final(x), self.bn_final, RELU)
        return self.fc(x.mean(dim=(2, 3)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
