"""KernelBench level 3, 4_LeNet5 (x: (1, 1, 32, 32) fp32; conv5x5 1 -> 6 + ReLU + 2x2 max pool, conv5x5 6 -> 16 +
ReLU + 2x2 max pool, Linear 400 -> 120 + ReLU, Linear 120 -> 84 + ReLU, Linear 84 -> num_classes).

Launch-bound: one 32x32 image is a few hundred kFLOP, while eager pays host launch overhead for ~12 kernels
(two cuDNN convolutions with their bias adds, ReLUs, pools, three linears; ~16 on the GPU with addmm's bias
copies) on every call. Here the convolutions stay cuDNN fp32 (in-place ReLU, max pool), each linear is ONE Triton
matrix-vector kernel with its bias and ReLU fused (a program takes 8 output features of one row, fp32
multiply-adds over the inputs), and the whole forward (~11 kernels) is captured once as a CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`), so a call is one input copy, one graph launch and
one output copy; the weights are read from the live parameters on every replay. More than 16 rows and CPU
tensors use ``torch.addmm`` + ReLU. All fp32, no reduced precision. The linear kernel is
:func:`cudal1.kernelzoo.blocks.small_mlp.linear_act`.
What remains: ~11 tiny kernels back to back inside the graph plus three launches and the harness's
synchronisation.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.small_mlp import linear_act


class ModelNew(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=6, kernel_size=5, stride=1)
        self.conv2 = nn.Conv2d(in_channels=6, out_channels=16, kernel_size=5, stride=1)
        self.fc1 = nn.Linear(in_features=16 * 5 * 5, out_features=120)
        self.fc2 = nn.Linear(in_features=120, out_features=84)
        self.fc3 = nn.Linear(in_features=84, out_features=num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.conv2d(x, self.conv1.weight, self.conv1.bias).relu_(), 2, 2)
        x = F.max_pool2d(F.conv2d(x, self.conv2.weight, self.conv2.bias).relu_(), 2, 2)
        x = x.reshape(-1, 16 * 5 * 5)
        x = linear_act(x, self.fc1, True)
        x = linear_act(x, self.fc2, True)
        return linear_act(x, self.fc3, False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
