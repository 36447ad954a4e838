"""KernelBench level 3, 5_AlexNet (x: (10, 3, 224, 224) fp32; conv11x11/4 3 -> 96, conv5x5 96 -> 256,
conv3x3 256 -> 384 -> 384 -> 256, each + ReLU, three 3x3/2 max pools, Linear 9216 -> 4096 -> 4096 -> num_classes
with ReLUs and Dropout(0.0) -> (10, num_classes)).

Eager runs ~20 kernels (five cuDNN convolutions with their bias adds, ReLUs, pools, three linears); the GPU work
is ~7 GFLOP of fp32 convolution and ~230 MB of linear weights (a short read at HBM rate), so a good part of
eager's time is host launch overhead (cuDNN's heuristics included). Here the whole forward (cuDNN fp32 convolutions,
in-place ReLUs, cuBLAS fp32 ``torch.addmm`` linears; no reduced precision; Dropout(0.0) is the identity) is
captured once as a CUDA graph (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one
input copy, one graph launch and one output copy; the weights are read from the live parameters on every replay.
The launch overhead goes, the GPU work stays.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)
        self.relu1 = nn.ReLU(inplace=True)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.conv2 = nn.Conv2d(in_channels=96, out_channels=256, kernel_size=5, padding=2)
        self.relu2 = nn.ReLU(inplace=True)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.conv3 = nn.Conv2d(in_channels=256, out_channels=384, kernel_size=3, padding=1)
        self.relu3 = nn.ReLU(inplace=True)
        self.conv4 = nn.Conv2d(in_channels=384, out_channels=384, kernel_size=3, padding=1)
        self.relu4 = nn.ReLU(inplace=True)
        self.conv5 = nn.Conv2d(in_channels=384, out_channels=256, kernel_size=3, padding=1)
        self.relu5 = nn.ReLU(inplace=True)
        self.maxpool3 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.fc1 = nn.Linear(in_features=256 * 6 * 6, out_features=4096)
        self.relu6 = nn.ReLU(inplace=True)
        self.dropout1 = nn.Dropout(p=0.0)
        self.fc2 = nn.Linear(in_features=4096, out_features=4096)
        self.relu7 = nn.ReLU(inplace=True)
        self.dropout2 = nn.Dropout(p=0.0)
        self.fc3 = nn.Linear(in_features=4096, out_features=num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        c1, c2, c3, c4, c5 = self.conv1, self.conv2, self.conv3, self.conv4, self.conv5
        x = F.max_pool2d(F.conv2d(x, c1.weight, c1.bias, stride=4, padding=2).relu_(), 3, 2)
        x = F.max_pool2d(F.conv2d(x, c2.weight, c2.bias, padding=2).relu_(), 3, 2)
        x = F.conv2d(x, c3.weight, c3.bias, padding=1).relu_()
        x = F.conv2d(x, c4.weight, c4.bias, padding=1).relu_()
        x = F.max_pool2d(F.conv2d(x, c5.weight, c5.bias, padding=1).relu_(), 3, 2)
        x = x.reshape(x.shape[0], -1)
        x = torch.addmm(self.fc1.bias, x, self.fc1.weight.t()).relu_()
        x = torch.addmm(self.fc2.bias, x, self.fc2.weight.t()).relu_()
        return torch.addmm(self.fc3.bias, x, self.fc3.weight.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
