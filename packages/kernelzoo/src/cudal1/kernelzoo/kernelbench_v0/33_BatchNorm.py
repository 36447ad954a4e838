"""KernelBench level 1, 33_BatchNorm (x: (16, 64, 256, 256) fp32, ``nn.BatchNorm2d(64)``; the harness runs both
models in eval mode, so it normalises with the running statistics).

``y = (x - running_mean[c]) * (weight[c] / sqrt(running_var[c] + eps)) + bias[c]``: one read and one write of
268 MB. Eager runs cuDNN's inference kernel, which moves these bytes more slowly than eager's scale-by-scalar
kernel moves the same bytes (5_Matrix_scalar_multiplication's reference).

Here :func:`cudal1.kernelzoo.blocks.streaming_cuda.batch_norm_eval`: a CUDA C streaming kernel, one block per
4096 values of one (n, c) plane, four 16-byte loads a thread issued before it reads its channel's parameters,
streaming stores. The module's parameters and buffers are read at every call (nothing derived from them is kept).
fp32 throughout. A Triton version of the same pass was no faster than eager and was removed. In training mode,
other layouts and on CPU: the module itself.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.streaming_cuda import batch_norm_eval


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        if self.training or not bn.track_running_stats or not bn.affine:
            return bn(x)  # batch statistics (training), or no affine parameters: torch's own batch norm
        return batch_norm_eval(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
