"""Released solution for built-in task `batch_norm2d`: the zoo's inference batch norm, one pass
``y = (x - running_mean) * weight / sqrt(running_var + eps) + bias`` per channel, with the per-channel
scale derived from the current buffers inside the kernel at every call."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.batch_norm import batch_norm


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)  # holds weight/bias/running stats under the task's names

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        return batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
