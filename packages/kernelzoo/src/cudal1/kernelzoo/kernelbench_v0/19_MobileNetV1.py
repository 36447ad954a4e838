"""KernelBench level 3, 19_MobileNetV1 (x: (10, 3, 224, 224) fp32; MobileNet v1 with width multiplier alpha: a 3x3/2
conv + batch norm + ReLU, 13 depthwise-separable blocks (3x3 depthwise conv + batch norm + ReLU, 1x1 conv + batch
norm + ReLU), 7x7 average pool, Linear 1024 -> num_classes). The harness evaluates both in eval mode, so every
batch norm is the per-channel affine map of its running statistics.

Eager runs ~85 kernels: 27 convolutions (the 13 depthwise ones in PyTorch's own fp32 depthwise kernel, well below
the memory roofline), 27 batch norms and 27 ReLUs, the last two full passes over activations of up to 32 MB. An
earlier version with one Triton batch-norm + ReLU pass per layer and no graph was no faster than eager. Here:
- each depthwise conv + batch norm + ReLU is ONE Triton kernel (this file): a program computes a 2-D output tile
  of one (image, channel) plane from the 9 shifted input tiles (fp32 FMAs, the 9 weights and the batch norm's
  scale/shift as scalars from the live running statistics), applies the ReLU and writes the tile once: one read
  of the input and one write of the output, where eager reads/writes the activation three times;
- the 14 dense convolutions (stem and the 1x1 pointwise ones) get their batch norms folded into the weights,
  ``bn(conv(x, w)) = conv(x, w * s) + (beta - mean * s)``, ``s = gamma / sqrt(var + eps)``, all at once with a few
  ``torch._foreach`` kernels, and run as ONE cuDNN call each with the bias and ReLU fused
  (``torch.cudnn_convolution_relu``, fp32; ``benchmarks/probes/probe_cudnn_fused.py`` checked its fp32 accuracy
  and measured it faster than eager conv + bn + ReLU on ResNet shapes);
- the whole forward is captured once as a CUDA graph
  (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one input copy, one graph launch
  and one output copy; the fold and everything else is recomputed from the live parameters on every replay;
- the 7x7 average pool of the 7x7 map is a plane mean (``avg_pool2d`` for other sizes), the classifier
  ``torch.addmm`` in fp32.
The fold and the fused cuDNN call are :mod:`cudal1.kernelzoo.blocks.conv_bn_fold`.
The fold moves one multiplication into the weights: within fp32 rounding of the reference, not bit-identical.
On CPU the same math in plain PyTorch ops.
The launch overhead and 40 of the 54 elementwise passes go, the depthwise convs run near the memory roofline, the
pointwise GEMMs remain.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.conv_bn_fold import conv_bias_act, fold_conv_bn
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _dw3x3_bn_relu_kernel(x_ptr, w_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, y_ptr, C, H, W, OH, OW,
                          STRIDE: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    """y[n, c] = relu(bn(depthwise3x3(x[n, c]))) on one BLOCK_H x BLOCK_W output tile (padding 1)."""
    pid = tl.program_id(0)
    c = pid % C
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    x_plane = x_ptr + pid.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
    for kh in tl.static_range(3):
        ih = oh * STRIDE + (kh - 1)
        hm = (ih >= 0) & (ih < H)
        for kw in tl.static_range(3):
            iw = ow * STRIDE + (kw - 1)
            m = hm[:, None] & ((iw >= 0) & (iw < W))[None, :]
            v = tl.load(x_plane + ih[:, None] * W + iw[None, :], mask=m, other=0.0)
            acc += tl.load(w_ptr + c * 9 + kh * 3 + kw) * v
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    shift = tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale
    out = tl.maximum(acc * scale + shift, 0.0)
    om = (oh < OH)[:, None] & (ow < OW)[None, :]
    tl.store(y_ptr + pid.to(tl.int64) * OH * OW + oh[:, None] * OW + ow[None, :], out, mask=om)


def _dw_bn_relu(x: torch.Tensor, conv: nn.Conv2d, bn: nn.BatchNorm2d) -> torch.Tensor:
    """relu(bn(conv(x))) for a 3x3 depthwise conv with padding 1 (bias-free) and an eval batch norm: one Triton
    kernel on fp32 CUDA tensors, PyTorch ops elsewhere."""
    n, c, h, w = x.shape
    s = conv.stride[0]
    if not (x.is_cuda and x.dtype == torch.float32):
        y = F.conv2d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups)
        return F.relu(F.batch_norm(y, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps))
    x = x.contiguous()
    oh, ow = (h - 1) // s + 1, (w - 1) // s + 1
    y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
    bw = min(128, triton.next_power_of_2(ow))
    bh = max(1, min(triton.next_power_of_2(oh), 1024 // bw))
    grid = (n * c, triton.cdiv(oh, bh), triton.cdiv(ow, bw))
    _dw3x3_bn_relu_kernel[grid](x, conv.weight, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps, y, c,
                                h, w, oh, ow, STRIDE=s, BLOCK_H=bh, BLOCK_W=bw, num_warps=4)
    return y


def _conv_bn(inp: int, oup: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(inp, oup, 3, stride, 1, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True))


def _conv_dw(inp: int, oup: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False), nn.BatchNorm2d(inp), nn.ReLU(inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True))


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000, input_channels=3, alpha=1.0):
        super().__init__()
        widths = [int(c * alpha) for c in (32, 64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024)]
        strides = [2, 1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1]
        blocks = [_conv_bn(input_channels, widths[0], strides[0])]
        blocks += [_conv_dw(widths[i - 1], widths[i], strides[i]) for i in range(1, len(widths))]
        self.model = nn.Sequential(*blocks, nn.AvgPool2d(7))
        self.fc = nn.Linear(int(1024 * alpha), num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        blocks = list(self.model)[:-1]
        dense = [(blocks[0][0], blocks[0][1])] + [(b[3], b[4]) for b in blocks[1:]]
        folded = iter(fold_conv_bn(dense))
        x = conv_bias_act(x, next(folded), blocks[0][0], True)
        for b in blocks[1:]:
            x = conv_bias_act(_dw_bn_relu(x, b[0], b[1]), next(folded), b[3], True)
        if x.shape[2] == 7 and x.shape[3] == 7:
            x = x.mean(dim=(2, 3))
        else:
            x = F.avg_pool2d(x, 7).reshape(x.shape[0], -1)
        return torch.addmm(self.fc.bias, x, self.fc.weight.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
