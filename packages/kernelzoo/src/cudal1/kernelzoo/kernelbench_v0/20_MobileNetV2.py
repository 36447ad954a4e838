"""KernelBench level 3, 20_MobileNetV2 (x: (10, 3, 224, 224) fp32; MobileNetV2: 3x3/2 conv 3 -> 32 + batch norm +
ReLU6, 17 inverted-residual blocks (1x1 expand conv + BN + ReLU6 where the expansion is not 1, 3x3 depthwise conv +
BN + ReLU6, 1x1 project conv + BN; the task builds them WITHOUT the residual add: ``_inverted_residual_block(...)[0]``
drops the flag), 1x1 conv 320 -> 1280 + BN + ReLU6, global average pool, Linear 1280 -> num_classes). The harness
evaluates both in eval mode, so every batch norm is the per-channel affine map of its running statistics.

Eager runs ~140 small kernels (52 convolutions, 52 batch norms, 35 ReLU6s, pool, linear; largely host launch
overhead at these sizes). An earlier graph-free version (one Triton batch-norm + ReLU6 pass per pair) was slower
than eager. Here:
- the whole forward is captured once as a CUDA graph
  (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): a call is one input copy, one graph launch and
  one output copy; everything below is recomputed from the live parameters on every replay (nothing cached);
- the batch norms of the 35 dense convolutions (stem, 16 expand, 17 project, last) are folded into their weights,
  ``bn(conv(x, w)) = conv(x, w * s) + (beta - mean * s)``, ``s = gamma / sqrt(var + eps)``, for all pairs at once
  with a few ``torch._foreach`` kernels (:mod:`cudal1.kernelzoo.blocks.conv_bn_fold`);
- a dense conv followed by ReLU6 (stem, expand, last) is ONE cuDNN call with bias and ReLU fused
  (``torch.cudnn_convolution_relu``, fp32), and the ``min(., 6)`` half of the ReLU6 is applied where the next
  kernel loads the tensor (``relu6(y) = min(relu(y), 6)``): for the stem and expand outputs inside the depthwise
  kernel below, for the last conv in the pooling; the project convs (no activation) are cuDNN conv + bias;
- each depthwise 3x3 conv + batch norm + ReLU6 is ONE Triton kernel (this file; the 19_MobileNetV1 kernel with the
  ReLU6 and the input clamp): a program computes a 2-D output tile of one (image, channel) plane from the 9
  shifted input tiles (fp32 FMAs, the 9 weights and the batch norm's scale/shift as scalars from the live running
  statistics) and writes it once, where eager reads and writes the activation three times;
- the classifier is ``torch.addmm`` in fp32; Dropout(0.0) is the identity.
The fold moves one multiplication into the weights: within fp32 rounding of the reference, not bit-identical.
On CPU the same math in plain PyTorch ops.
Note: the harness judges this task degenerate (its output did not change between two input draws at the
randomised parameters: it found the output independent of the input), so it is left out of every average
whatever this file does.
The recipe is that of 19_MobileNetV1 and 22_EfficientNetB0: the launch overhead and ~70 of the ~87 elementwise
passes go, the convolutions remain.

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
def _dw3x3_bn_relu6_kernel(x_ptr, w_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, y_ptr, C, H, W, OH, OW,
                           STRIDE: tl.constexpr, CLAMP_IN: tl.constexpr, BLOCK_H: tl.constexpr,
                           BLOCK_W: tl.constexpr):
    """y[n, c] = relu6(bn(depthwise3x3(x'[n, c]))) on one BLOCK_H x BLOCK_W output tile (padding 1), where
    x' = min(x, 6) with CLAMP_IN (x already ReLU'd: then x' is its ReLU6) and x' = x otherwise."""
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
            if CLAMP_IN:
                v = tl.minimum(v, 6.0)
            acc += tl.load(w_ptr + c * 9 + kh * 3 + kw) * v
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    shift = tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale
    out = tl.minimum(tl.maximum(acc * scale + shift, 0.0), 6.0)
    om = (oh < OH)[:, None] & (ow < OW)[None, :]
    tl.store(y_ptr + pid.to(tl.int64) * OH * OW + oh[:, None] * OW + ow[None, :], out, mask=om)


def _dw_bn_relu6(x: torch.Tensor, conv: nn.Conv2d, bn: nn.BatchNorm2d, clamp_in: bool) -> torch.Tensor:
    """relu6(bn(conv(x'))) for a 3x3 depthwise conv with padding 1 (bias-free) and an eval batch norm, with
    ``x' = min(x, 6)`` when ``clamp_in`` (``x`` a ReLU output whose upper clamp was deferred to here): one Triton
    kernel on fp32 CUDA tensors, PyTorch ops elsewhere."""
    n, c, h, w = x.shape
    s = conv.stride[0]
    if not (x.is_cuda and x.dtype == torch.float32):
        y = F.conv2d(x.clamp_max(6.0) if clamp_in else x, conv.weight, None, conv.stride, conv.padding,
                     conv.dilation, conv.groups)
        return F.hardtanh(F.batch_norm(y, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps),
                          0.0, 6.0)
    x = x.contiguous()
    oh, ow = (h - 1) // s + 1, (w - 1) // s + 1
    y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
    bw = min(128, triton.next_power_of_2(ow))
    bh = max(1, min(triton.next_power_of_2(oh), 1024 // bw))
    grid = (n * c, triton.cdiv(oh, bh), triton.cdiv(ow, bw))
    _dw3x3_bn_relu6_kernel[grid](x, conv.weight, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps, y, c,
                                 h, w, oh, ow, STRIDE=s, CLAMP_IN=clamp_in, BLOCK_H=bh, BLOCK_W=bw, num_warps=4)
    return y


def _make_divisible(v, divisor, min_value=None):
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _block(inp: int, oup: int, stride: int, expand_ratio: int) -> nn.Sequential:
    """The task's inverted-residual block (same layer order, hence the same parameter names); no residual add."""
    hidden = int(inp * expand_ratio)
    layers: list[nn.Module] = []
    if expand_ratio != 1:
        layers += [nn.Conv2d(inp, hidden, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True)]
    layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
               nn.ReLU6(inplace=True), nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)]
    return nn.Sequential(*layers)


# (expansion t, output channels c, repeats n, first stride s), as the task builds them
_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        inp, last = 32, 1280
        features: list[nn.Module] = [nn.Conv2d(3, inp, 3, 2, 1, bias=False), nn.BatchNorm2d(inp),
                                     nn.ReLU6(inplace=True)]
        for t, c, n, s in _SETTING:
            oup = _make_divisible(c, 8)
            for i in range(n):
                features.append(_block(inp, oup, s if i == 0 else 1, t))
                inp = oup
        features += [nn.Conv2d(inp, last, 1, 1, 0, bias=False), nn.BatchNorm2d(last), nn.ReLU6(inplace=True),
                     nn.AdaptiveAvgPool2d((1, 1))]
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.0), nn.Linear(last, num_classes))
        self._graph = CUDAGraphForward(self._forward)

    def _dense_pairs(self) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
        """Every (dense conv, batch norm) pair in the order :meth:`_forward` consumes their folds."""
        f = self.features
        pairs = [(f[0], f[1])]
        for blk in list(f)[3:-4]:
            if len(blk) == 8:
                pairs.append((blk[0], blk[1]))
            pairs.append((blk[-2], blk[-1]))
        return pairs + [(f[-4], f[-3])]

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.features
        folded = iter(fold_conv_bn(self._dense_pairs()))
        x = conv_bias_act(x, next(folded), f[0], True)
        clamp = True  # x is a ReLU output whose ReLU6 clamp at 6 is still to be applied
        for blk in list(f)[3:-4]:
            if len(blk) == 8:  # expand 1x1 conv + BN + ReLU6
                if clamp:
                    x = x.clamp_max(6.0)
                x, clamp = conv_bias_act(x, next(folded), blk[0], True), True
                dw, dw_bn, proj = blk[3], blk[4], blk[6]
            else:
                dw, dw_bn, proj = blk[0], blk[1], blk[3]
            x = _dw_bn_relu6(x, dw, dw_bn, clamp)
            w, b = next(folded)
            x, clamp = F.conv2d(x, w, b, proj.stride, proj.padding), False
        if clamp:
            x = x.clamp_max(6.0)
        x = conv_bias_act(x, next(folded), f[-4], True).clamp_max_(6.0).mean(dim=(2, 3))
        fc = self.classifier[1]
        return torch.addmm(fc.bias, x, fc.weight.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
