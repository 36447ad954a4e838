"""KernelBench level 3, 23_EfficientNetB1 (x: (10, 3, 240, 240) fp32 -> (10, 1000); stem 3x3 conv stride 2 +
BatchNorm + ReLU, 7 MBConv blocks ``mbconv1..7`` (each an ``nn.Sequential``: 1x1 expand + BN + ReLU6, depthwise
3x3 + BN + ReLU6, 1x1 project + BN; no residual), 1x1 conv 320 -> 1280 + BN + ReLU, global average pool, Linear).
The harness evaluates both models in eval mode, so every batch norm is the per-channel affine map of its running
statistics.

Eager launches ~60 small kernels, each costing more host time than its GPU work at these sizes: launch-bound.
Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it, each batch norm with its activation is ONE Triton pass (``cudal1.kernelzoo.blocks.bn_act``, running
  statistics read on every replay, nothing cached), the convolutions stay cuDNN fp32: ~20 fewer kernels and one
  full read+write fewer per BN/activation pair (the 240x240 stem and first blocks are the largest tensors).

The graph should run in about the GPU time of the kernels.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import NONE, RELU, RELU6, bn_act
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


def _mbconv(in_channels: int, out_channels: int, stride: int, expand_ratio: int) -> nn.Sequential:
    """The task's block layout (indices 0..7: conv, BN, ReLU6, depthwise conv, BN, ReLU6, conv, BN)."""
    hidden = round(in_channels * expand_ratio)
    return nn.Sequential(
        nn.Conv2d(in_channels, hidden, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, out_channels, 1, 1, 0, bias=False), nn.BatchNorm2d(out_channels))


def _run_mbconv(block: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    x = bn_act(block[0](x), block[1], RELU6)
    x = bn_act(block[3](x), block[4], RELU6)
    return bn_act(block[6](x), block[7], NONE)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.mbconv1 = _mbconv(32, 16, 1, 1)
        self.mbconv2 = _mbconv(16, 24, 2, 6)
        self.mbconv3 = _mbconv(24, 40, 2, 6)
        self.mbconv4 = _mbconv(40, 80, 2, 6)
        self.mbconv5 = _mbconv(80, 112, 1, 6)
        self.mbconv6 = _mbconv(112, 192, 2, 6)
        self.mbconv7 = _mbconv(192, 320, 1, 6)
        self.conv2 = nn.Conv2d(320, 1280, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.fc = nn.Linear(1280, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = bn_act(self.conv1(x), self.bn1, RELU)
        for block in (self.mbconv1, self.mbconv2, self.mbconv3, self.mbconv4, self.mbconv5, self.mbconv6,
                      self.mbconv7):
            x = _run_mbconv(block, x)
        x = bn_act(self.conv2(x), self.bn2, RELU)
        return self.fc(x.mean(dim=(2, 3)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
