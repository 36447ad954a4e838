"""KernelBench level 1, 34_InstanceNorm (x: (16, 64, 256, 256) fp32, nn.InstanceNorm2d(64): no affine, no running
statistics, so every (n, c) plane is normalised by its own mean and biased variance, eps 1e-5): instance norm is
group norm with one channel per group and unit weight / zero bias, so this runs the zoo's group norm with
``groups = C`` (a statistics kernel over 2 programs per 256 KiB plane, Chan-merged mean/M2; an apply kernel
writing ``(x - mean) * rstd``). Eager reshapes to (1, N * C, H, W) and runs a training-mode batch norm (cuDNN
or ATen's per-channel moments + transform), also three passes over x; the zoo op beat eager's group norm by
1.16x on the built-in task with the same structure. Expected about 1.0-1.2x (memory-bound, 268 MiB): the least
certain of this set; keep it only if the GPU run says so. Not yet measured on a GPU."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.group_norm import group_norm


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)  # eps; affine / running stats are off

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.inorm
        if m.affine or m.track_running_stats:  # not this task's module; keep torch's semantics
            return m(x)
        c = x.shape[1]
        ones = torch.ones(c, device=x.device, dtype=x.dtype)
        zeros = torch.zeros(c, device=x.device, dtype=x.dtype)
        return group_norm(x, c, ones, zeros, m.eps)
