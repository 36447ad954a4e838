"""KernelBench level 3, 9_ResNet18 (x: (2, 3, 224, 224) fp32; ResNet-18: 7x7 stem conv + batch norm + ReLU +
3x3 max pool, four stages of two BasicBlocks (3x3 conv, batch norm, ReLU, 3x3 conv, batch norm, residual add with
an optional 1x1 conv + batch norm downsample, ReLU), global average pool, Linear 512 -> num_classes). The harness
evaluates both in eval mode, so every batch norm is the per-channel affine map of its running statistics.

Launch-bound at batch 2: eager runs ~70 kernels (20 cuDNN convolutions, 20 batch norms, ReLUs, adds, pools,
the linear), each paying host launch overhead (cuDNN's more), on a few MB of activations. Here:
- the whole forward is captured once as a CUDA graph
  (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one input copy, one graph launch
  and one output copy; everything below is recomputed from the live parameters on every replay (nothing cached);
- every eval batch norm is folded into its convolution, ``bn(conv(x, w)) = conv(x, w * s) + (beta - mean * s)``
  with ``s = gamma / sqrt(var + eps)``, for all 20 pairs at once with a few ``torch._foreach`` kernels (the fold of
  the removed ``blocks.conv_bn``, now :mod:`cudal1.kernelzoo.blocks.conv_bn_fold`);
- each folded conv + bias (+ residual) + ReLU is ONE cuDNN call (``torch.cudnn_convolution_relu`` /
  ``torch.cudnn_convolution_add_relu``, fp32; ``benchmarks/probes/probe_cudnn_fused.py`` checked their fp32
  accuracy and speed on ResNet shapes), so the batch norm, add and ReLU passes are gone;
- the classifier is ``torch.addmm`` in fp32, the average pool a plane mean.
The fold moves one multiplication into the weights: within fp32 rounding of the reference, not bit-identical.
On CPU the same math in plain PyTorch ops.
What remains is ~50 small kernels replayed back to back (3.6 GFLOP of fp32 convolution) plus three launches.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.conv_bn_fold import conv_bias_act, fold_conv_bn
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = downsample
        self.stride = stride

    def pairs(self) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
        """The block's (conv, batch norm) pairs in the order :meth:`forward` consumes their folds."""
        p = [(self.conv1, self.bn1), (self.conv2, self.bn2)]
        return p if self.downsample is None else p + [(self.downsample[0], self.downsample[1])]

    def forward(self, x: torch.Tensor, folded) -> torch.Tensor:
        """relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut) from an iterator over the folds of :meth:`pairs`."""
        f1, f2 = next(folded), next(folded)
        out = conv_bias_act(x, f1, self.conv1, True)
        identity = x if self.downsample is None else conv_bias_act(x, next(folded), self.downsample[0], False)
        return conv_bias_act(out, f2, self.conv2, True, identity)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.in_channels = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, 2, stride=1)
        self.layer2 = self._make_layer(128, 2, stride=2)
        self.layer3 = self._make_layer(256, 2, stride=2)
        self.layer4 = self._make_layer(512, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * BasicBlock.expansion, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _make_layer(self, out_channels: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.in_channels != out_channels * BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.in_channels, out_channels * BasicBlock.expansion, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(out_channels * BasicBlock.expansion))
        layers = [BasicBlock(self.in_channels, out_channels, stride, downsample)]
        self.in_channels = out_channels * BasicBlock.expansion
        layers += [BasicBlock(self.in_channels, out_channels) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        blocks = [b for layer in (self.layer1, self.layer2, self.layer3, self.layer4) for b in layer]
        folded = iter(fold_conv_bn([(self.conv1, self.bn1)] + [p for b in blocks for p in b.pairs()]))
        x = F.max_pool2d(conv_bias_act(x, next(folded), self.conv1, True), 3, 2, 1)
        for b in blocks:
            x = b(x, folded)
        x = x.mean(dim=(2, 3))
        return torch.addmm(self.fc.bias, x, self.fc.weight.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
