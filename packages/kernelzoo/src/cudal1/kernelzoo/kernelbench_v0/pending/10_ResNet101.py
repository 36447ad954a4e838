"""KernelBench level 3, 10_ResNet101 (x: (10, 3, 224, 224) fp32; ResNet-101: 7x7 stem conv + BatchNorm + ReLU +
max pool, 3/4/23/3 bottleneck blocks (1x1, 3x3, 1x1 convs each followed by BatchNorm, ReLU after the first two,
residual add (downsample 1x1 conv + BatchNorm on the first block of a stage) then ReLU), global average pool,
Linear -> (10, 1000)). The harness evaluates both models in eval mode, so every batch norm is the per-channel
affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager runs every elementwise step as its own kernel over the full activation: per bottleneck batch norm, ReLU,
batch norm, ReLU, batch norm, (downsample batch norm,) in-place add, ReLU: 7-8 launches and as many read/write
passes. Here the convolutions stay cuDNN fp32 (no TF32) and the steps between them are ONE Triton pass each:
bn+ReLU after conv1 and conv2, and relu(bn3(a) + identity) -- or relu(bn3(a) + bn_d(downsample conv)) -- after
conv3. That is 3 elementwise launches per block instead of 7-8 (about 100 launches fewer over the network) and
roughly half the elementwise memory traffic. Expected: ~1.2x (eager reference 10.9 ms on an H100).
Not yet measured on a GPU.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import bn_act


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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act(self.conv1(x), self.bn1, 1)
        out = bn_act(self.conv2(out), self.bn2, 1)
        if self.downsample is None:
            return bn_act(self.conv3(out), self.bn3, 1, x)
        return bn_act(self.conv3(out), self.bn3, 1, self.downsample[0](x), self.downsample[1])


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
        x = self.maxpool(bn_act(self.conv1(x), self.bn1, 1))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean(dim=(2, 3)))
