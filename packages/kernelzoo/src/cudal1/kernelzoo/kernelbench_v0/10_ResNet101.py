"""KernelBench level 3, 10_ResNet101 (x: (10, 3, 224, 224) fp32; ResNet-101: 7x7 stem conv + batch norm + ReLU +
3x3 max pool, stages of 3/4/23/3 Bottleneck blocks (1x1 conv, batch norm, ReLU, 3x3 conv, batch norm, ReLU,
1x1 conv, batch norm, residual add with an optional 1x1 conv + batch norm downsample, ReLU), global average pool,
Linear 2048 -> num_classes). The harness evaluates both in eval mode, so every batch norm is the per-channel
affine map of its running statistics.

Eager runs ~350 kernels: 104 cuDNN convolutions, 104 batch norms, ~100 ReLUs and 33 residual adds, the last three
full passes over activations of up to 32 MB each. Here:
- the whole forward is captured once as a CUDA graph
  (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one input copy, one graph launch
  and one output copy; everything below is recomputed from the live parameters on every replay (nothing cached);
- every eval batch norm is folded into its convolution, ``bn(conv(x, w)) = conv(x, w * s) + (beta - mean * s)``
  with ``s = gamma / sqrt(var + eps)``, for all 104 pairs at once with a few ``torch._foreach`` kernels plus one
  weight multiply per conv (~170 MB of weights read and written);
- each folded conv + bias (+ residual) + ReLU is ONE cuDNN call (``torch.cudnn_convolution_relu`` /
  ``torch.cudnn_convolution_add_relu``, fp32; ``benchmarks/probes/probe_cudnn_fused.py`` compares them with
  eager conv + bn + ReLU);
- the classifier is ``torch.addmm`` in fp32, the average pool a plane mean.
History: the same fold without a graph was slower than eager (its ~400 host launches per call cost more than the
fusion saved), and so were separate Triton batch-norm passes without a graph. The graph removes the host side of
both. The fold and the fused cuDNN call are :mod:`cudal1.kernelzoo.blocks.conv_bn_fold`.
The fold moves one multiplication into the weights: within fp32 rounding of the reference, not bit-identical.
On CPU the same math in plain PyTorch ops.
What remains is the ~78 GFLOP of fp32 convolution: the launch overhead and the batch norm, add and ReLU passes go.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.conv_bn_fold import conv_bias_act, fold_conv_bn
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.conv3 = nn.Conv2d(out_channels, out_channels * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def pairs(self) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
        """The block's (conv, batch norm) pairs in the order :meth:`forward` consumes their folds."""
        p = [(self.conv1, self.bn1), (self.conv2, self.bn2), (self.conv3, self.bn3)]
        return p if self.downsample is None else p + [(self.downsample[0], self.downsample[1])]

    def forward(self, x: torch.Tensor, folded) -> torch.Tensor:
        """relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut) from an iterator over the folds of
        :meth:`pairs`."""
        f1, f2, f3 = next(folded), next(folded), next(folded)
        out = conv_bias_act(conv_bias_act(x, f1, self.conv1, True), f2, self.conv2, True)
        identity = x if self.downsample is None else conv_bias_act(x, next(folded), self.downsample[0], False)
        return conv_bias_act(out, f3, self.conv3, True, identity)


class ModelNew(nn.Module):
    def __init__(self, layers, num_classes=1000):
        super().__init__()
        self.in_channels = 64
        self.conv1 = nn.Conv2d(3, self.in_channels, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.in_channels)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _make_layer(self, out_channels: int, blocks: int, stride: int = 1) -> nn.Sequential:
        width = out_channels * Bottleneck.expansion
        downsample = None
        if stride != 1 or self.in_channels != width:
            downsample = nn.Sequential(nn.Conv2d(self.in_channels, width, kernel_size=1, stride=stride, bias=False),
                                       nn.BatchNorm2d(width))
        layers = [Bottleneck(self.in_channels, out_channels, stride, downsample)]
        self.in_channels = width
        layers += [Bottleneck(self.in_channels, out_channels) for _ in range(1, blocks)]
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
