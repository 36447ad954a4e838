"""KernelBench level 3, 7_GoogleNetInceptionV1 (x: (10, 3, 224, 224) fp32 -> (10, 1000); stem 7x7/2 conv + ReLU
+ max pool, 1x1 conv + ReLU, 3x3 conv + ReLU + max pool, 9 inception modules (1x1; 1x1 -> 3x3; 1x1 -> 5x5;
3x3 max pool -> 1x1; concatenated) with max pools between, global average pool, Linear 1024 -> 1000).

Eager launches ~120 kernels (each conv is a conv kernel plus a bias add), each with its host launch cost, while
most convolutions after the stem work on 28x28 / 14x14 / 7x7 maps and are short next to that cost: largely
launch-bound. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy (6 MB), one graph launch and one output clone of host time;
* inside it, the three 1x1 convolutions of each inception module that read the module's input become ONE cuDNN
  conv with their weights and biases stacked per call (each output channel is the same dot product; nothing is
  cached): the input is read once instead of three times, 18 conv launches and 18 bias adds fewer in all;
* the stem's ReLUs run in place.

The graph should run in about the GPU time of the convolutions.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class InceptionModule(nn.Module):
    """The task's inception module (same submodule names); the three 1x1 convs over the input run as one."""

    def __init__(self, in_channels, out_1x1, reduce_3x3, out_3x3, reduce_5x5, out_5x5, pool_proj):
        super().__init__()
        self.branch1x1 = nn.Conv2d(in_channels, out_1x1, kernel_size=1)
        self.branch3x3 = nn.Sequential(nn.Conv2d(in_channels, reduce_3x3, kernel_size=1),
                                       nn.Conv2d(reduce_3x3, out_3x3, kernel_size=3, padding=1))
        self.branch5x5 = nn.Sequential(nn.Conv2d(in_channels, reduce_5x5, kernel_size=1),
                                       nn.Conv2d(reduce_5x5, out_5x5, kernel_size=5, padding=2))
        self.branch_pool = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1),
                                         nn.Conv2d(in_channels, pool_proj, kernel_size=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c1, r3, r5 = self.branch1x1, self.branch3x3[0], self.branch5x5[0]
        o1, n3 = c1.out_channels, r3.out_channels
        y = F.conv2d(x, torch.cat([c1.weight, r3.weight, r5.weight]), torch.cat([c1.bias, r3.bias, r5.bias]))
        b3 = self.branch3x3[1](y[:, o1:o1 + n3])
        b5 = self.branch5x5[1](y[:, o1 + n3:])
        bp = self.branch_pool(x)
        return torch.cat([y[:, :o1], b3, b5, bp], 1)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=1)
        self.conv3 = nn.Conv2d(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception3a = InceptionModule(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = InceptionModule(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception4a = InceptionModule(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = InceptionModule(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = InceptionModule(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = InceptionModule(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = InceptionModule(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception5a = InceptionModule(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = InceptionModule(832, 384, 192, 384, 48, 128, 128)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.0)
        self.fc = nn.Linear(1024, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool1(torch.relu_(self.conv1(x)))
        x = torch.relu_(self.conv2(x))
        x = self.maxpool2(torch.relu_(self.conv3(x)))
        x = self.inception3b(self.inception3a(x))
        x = self.maxpool3(x)
        for m in (self.inception4a, self.inception4b, self.inception4c, self.inception4d, self.inception4e):
            x = m(x)
        x = self.maxpool4(x)
        x = self.inception5b(self.inception5a(x))
        return self.fc(self.dropout(x.mean(dim=(2, 3))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
