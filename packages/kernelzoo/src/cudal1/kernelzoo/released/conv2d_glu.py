"""Released solution for built-in task `conv2d_glu`: cuDNN convolution without bias, then one fused Triton pass
(bias + GLU over channels) reading the convolution output once and writing the half-sized result."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.bias_glu import bias_glu


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 2 * out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding)
        return bias_glu(y, self.conv.bias)
