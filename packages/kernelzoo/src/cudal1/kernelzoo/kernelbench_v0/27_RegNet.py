"""KernelBench level 3, 27_RegNet, second version: the convolutions' biases folded into the batch norms' shifts,
and the whole forward replayed as ONE CUDA graph.

Task: x (8, 3, 224, 224) fp32 -> (8, 10); 3 stages of [3x3 conv (with bias) + BatchNorm + ReLU, 3x3 conv (with
bias) + BatchNorm + ReLU, 2x2 max pool] with widths 64 / 128 / 256 at 224 / 112 / 56, global average pool,
Linear. Eval mode: every batch norm is the affine map of its running statistics.

The first version ran each conv through ``nn.Conv2d`` with its bias, which
cuDNN applies as a separate ``add_`` pass over the conv output (103 MB tensors in stage 1), then one Triton pass
for batch norm + ReLU (and + 2x2 max pool after the second conv). Here each conv runs without its bias and the
bias rides in the batch norm that follows: bn(conv(x) + b) = conv(x) * s + (beta + (b - mean) * s) with
s = gamma / sqrt(var + eps), computed per channel inside the same Triton pass from the running statistics and
the conv bias (nothing cached: the parameters are read on every call). That removes the six bias passes, about
0.7 GB of the ~1.3 GB of non-convolution traffic. The kernels are the first version's with the bias
pointer added: relu(bn(a + b)) as one pass, and relu(bn(a + b)) + 2x2 max pool as one pass writing only the
pooled quarter (each value normalised before the max, so a negative batch-norm scale is handled). The forward is
captured once (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): three launches a call instead of ~14
(minor here; the fp32 3x3 convolutions, ~120 GFLOP, are most of the time).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _scale_shift(c, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps):
    """Per-channel affine map of bn(v + conv_bias): v * scale + shift."""
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    return scale, tl.load(b_ptr + c) + (tl.load(cb_ptr + c) - tl.load(rm_ptr + c)) * scale


@triton.jit
def _bias_bn_relu_kernel(x_ptr, y_ptr, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, HW, BLOCK: tl.constexpr):
    """y[n, c] = relu(bn(x[n, c] + cb[c])) for one block of the (n, c) plane."""
    pid = tl.program_id(0)
    scale, shift = _scale_shift(pid % C, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    v = tl.load(x_ptr + pid.to(tl.int64) * HW + offs, mask=m, other=0.0)
    tl.store(y_ptr + pid.to(tl.int64) * HW + offs, tl.maximum(v * scale + shift, 0.0), mask=m)


@triton.jit
def _bias_bn_relu_max2_kernel(x_ptr, y_ptr, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, H, W, OH, OW,
                              BLOCK: tl.constexpr):
    """y[n, c, i, j] = max over the 2x2 window at (2i, 2j) of relu(bn(x + cb)) (MaxPool2d(2) floors odd sizes)."""
    pid = tl.program_id(0)
    scale, shift = _scale_shift(pid % C, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < OH * OW
    base = x_ptr + pid.to(tl.int64) * H * W + (offs // OW) * 2 * W + (offs % OW) * 2
    v = tl.maximum(tl.load(base, mask=m, other=0.0) * scale + shift,
                   tl.load(base + 1, mask=m, other=0.0) * scale + shift)
    v = tl.maximum(v, tl.load(base + W, mask=m, other=0.0) * scale + shift)
    v = tl.maximum(v, tl.load(base + W + 1, mask=m, other=0.0) * scale + shift)
    tl.store(y_ptr + pid.to(tl.int64) * (OH * OW) + offs, tl.maximum(v, 0.0), mask=m)


def _fast(x: torch.Tensor, bn: nn.BatchNorm2d) -> bool:
    return x.is_cuda and x.dtype == torch.float32 and bn.affine and bn.running_mean is not None


def conv_bn_relu(x: torch.Tensor, conv: nn.Conv2d, bn: nn.BatchNorm2d, pool: bool) -> torch.Tensor:
    """relu(bn(conv(x))) (then max_pool2d(., 2) when ``pool``): the conv without its bias, the bias folded into
    the batch norm's shift inside one Triton pass (running statistics)."""
    if not _fast(x, bn) or conv.bias is None:
        y = F.relu(F.batch_norm(conv(x), bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps))
        return F.max_pool2d(y, 2, 2) if pool else y
    a = F.conv2d(x, conv.weight, None, conv.stride, conv.padding).contiguous()
    n, c, h, w = a.shape
    stats = (conv.bias, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
    if not pool:
        y = torch.empty_like(a)
        block = min(1024, triton.next_power_of_2(h * w))
        _bias_bn_relu_kernel[(n * c, triton.cdiv(h * w, block))](a, y, *stats, c, h * w, BLOCK=block, num_warps=4)
        return y
    oh, ow = h // 2, w // 2
    y = torch.empty((n, c, oh, ow), device=a.device, dtype=a.dtype)
    block = min(1024, triton.next_power_of_2(max(oh * ow, 1)))
    _bias_bn_relu_max2_kernel[(n * c, triton.cdiv(oh * ow, block))](a, y, *stats, c, h, w, oh, ow, BLOCK=block,
                                                                    num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, input_channels, stages, block_widths, output_classes):
        super().__init__()
        self.stages = stages
        self.block_widths = block_widths
        layers = []
        current_channels = input_channels
        for i in range(stages):
            layers.append(self._make_stage(current_channels, block_widths[i]))
            current_channels = block_widths[i]
        self.feature_extractor = nn.Sequential(*layers)
        self.fc = nn.Linear(block_widths[-1], output_classes)
        self._graph = CUDAGraphForward(self._forward)

    @staticmethod
    def _make_stage(in_channels, out_channels):
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        """Device work only (no host syncs; shapes fixed by the input's)."""
        for stage in self.feature_extractor:
            x = conv_bn_relu(x, stage[0], stage[1], pool=False)
            x = conv_bn_relu(x, stage[3], stage[4], pool=True)
        return self.fc(torch.mean(x, dim=[2, 3]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
