"""KernelBench level 3, 10_ResNet101 (x: (10, 3, 224, 224) fp32; ResNet-101: 7x7 stem conv + BatchNorm + ReLU +
max pool, 3/4/23/3 bottleneck blocks (1x1, 3x3, 1x1 convs each followed by BatchNorm, ReLU after the first two,
residual add (downsample 1x1 conv + BatchNorm on the first block of a stage) then ReLU), global average pool,
Linear -> (10, 1000)). The harness evaluates both models in eval mode, so every batch norm is the per-channel
affine map of its running statistics.

Every batch norm folds into the convolution before it (exact: ``bn(conv(x, w)) = conv(x, w*s) + b'``), computed
inside each forward from the current parameters with a few ``torch._foreach`` launches for all 104 pairs
(``blocks.conv_bn.fold``), and each convolution then runs as ONE cuDNN call with its bias, the residual and the ReLU
fused (``blocks.conv_bn.conv_act``): no elementwise pass over any activation remains (eager: batch norm, ReLU and
add passes after each convolution, ~200 launches). cuDNN fp32, no TF32.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_bn import conv_act, fold


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
        """The block's (conv, bn) pairs in the order :meth:`run` consumes their folded weights."""
        p = [(self.conv1, self.bn1), (self.conv2, self.bn2), (self.conv3, self.bn3)]
        return p + ([(self.downsample[0], self.downsample[1])] if self.downsample is not None else [])

    def run(self, x: torch.Tensor, w: list[torch.Tensor], b: list[torch.Tensor]) -> torch.Tensor:
        """The block on ``x`` with the folded weights/biases of :meth:`pairs` (same order)."""
        out = conv_act(x, w[0], b[0], self.conv1, True)
        out = conv_act(out, w[1], b[1], self.conv2, True)
        z = x if self.downsample is None else conv_act(x, w[3], b[3], self.downsample[0], False)
        return conv_act(out, w[2], b[2], self.conv3, True, z)


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

    def _make_layer(self, out_channels, blocks, stride=1):
        downsample = None
        if stride != 1 or self.in_channels != out_channels * Bottleneck.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.in_channels, out_channels * Bottleneck.expansion, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(out_channels * Bottleneck.expansion))
        layers = [Bottleneck(self.in_channels, out_channels, stride, downsample)]
        self.in_channels = out_channels * Bottleneck.expansion
        layers += [Bottleneck(self.in_channels, out_channels) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        blocks = [blk for layer in (self.layer1, self.layer2, self.layer3, self.layer4) for blk in layer]
        pairs = [(self.conv1, self.bn1)] + [p for blk in blocks for p in blk.pairs()]
        w, b = fold(pairs)
        x = self.maxpool(conv_act(x, w[0], b[0], self.conv1, True))
        i = 1
        for blk in blocks:
            n = 3 if blk.downsample is None else 4
            x = blk.run(x, w[i:i + n], b[i:i + n])
            i += n
        return self.fc(x.mean(dim=(2, 3)))
