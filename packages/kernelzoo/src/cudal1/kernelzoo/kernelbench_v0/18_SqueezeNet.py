"""KernelBench level 3, 18_SqueezeNet (x: (1, 3, 224, 224) fp32; SqueezeNet 1.0: 7x7/2 conv 3 -> 96 + ReLU,
3x3/2 ceil-mode max pools, eight fire modules (1x1 squeeze conv + ReLU, then 1x1 and 3x3 expand convs + ReLU,
concatenated over channels), classifier 1x1 conv 512 -> num_classes + ReLU, global average pool
-> (1, num_classes)).

Launch-bound at batch 1: eager runs ~70 kernels (26 cuDNN convolutions with their bias adds, ReLUs, the eight
concatenations, pools) on at most a few MB of activations, each paying host launch overhead (cuDNN's more). An
earlier graph-free version was rejected by the harness as launch-bound (``timing_disagrees``). Here:
- the whole forward is captured once as a CUDA graph
  (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one input copy, one graph launch
  and one output copy; the weights are read from the live parameters on every replay;
- every conv + bias + ReLU is ONE cuDNN call (``torch.cudnn_convolution_relu``, fp32;
  ``benchmarks/probes/probe_cudnn_fused.py`` checked its fp32 accuracy) instead of conv, bias add and ReLU;
- a fire module's two expand branches are ONE 3x3 convolution with E1 + E3 output channels: the 1x1 weights are
  zero-padded to 3x3 (their centre tap) and concatenated with the 3x3 weights, so the conv writes the
  concatenated, biased, ReLU'd output directly (the extra taps add exact zeros; the extra ~0.4 GFLOP over all
  eight modules cost less than the ~40 saved kernels); no concatenation copy;
- the classifier's average pool is a plane mean; convolutions are fp32 (no reduced precision).
On CPU the same math in plain PyTorch ops.
What remains is ~45 small kernels replayed back to back plus three launches.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


def _conv_relu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, stride: int = 1,
               padding: int = 0) -> torch.Tensor:
    """relu(conv2d(x, w, b)): one fused cuDNN call on fp32 CUDA tensors, PyTorch ops elsewhere."""
    if x.is_cuda and x.dtype == torch.float32:
        return torch.cudnn_convolution_relu(x, w, b, (stride, stride), (padding, padding), (1, 1), 1)
    return F.relu(F.conv2d(x, w, b, stride, padding))


class FireModule(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """relu(squeeze), then both expand branches as one 3x3 conv (1x1 weights at the centre tap) + bias + ReLU
        writing the (N, E1 + E3, H, W) concatenation directly."""
        s = _conv_relu(x, self.squeeze.weight, self.squeeze.bias)
        w = torch.cat([F.pad(self.expand1x1.weight, (1, 1, 1, 1)), self.expand3x3.weight], 0)
        return _conv_relu(s, w, torch.cat([self.expand1x1.bias, self.expand3x3.bias]), 1, 1)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 96, kernel_size=7, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(96, 16, 64, 64),
            FireModule(128, 16, 64, 64),
            FireModule(128, 32, 128, 128),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(256, 32, 128, 128),
            FireModule(256, 48, 192, 192),
            FireModule(384, 48, 192, 192),
            FireModule(384, 64, 256, 256),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.0),
            nn.Conv2d(512, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        stem = self.features[0]
        x = _conv_relu(x, stem.weight, stem.bias, 2)
        for m in list(self.features)[2:]:
            x = F.max_pool2d(x, 3, 2, ceil_mode=True) if isinstance(m, nn.MaxPool2d) else m(x)
        head = self.classifier[1]  # Dropout(0.0) is the identity
        return _conv_relu(x, head.weight, head.bias).mean(dim=(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
