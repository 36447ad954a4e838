"""Eval-mode batch norm folded into the bias-free convolution before it, and the folded convolution with its bias
(+ residual) (+ ReLU) as ONE cuDNN call (KernelBench level 3 in ``kernelbench_v0``: 9_ResNet18, 10_ResNet101,
19_MobileNetV1, pending 20_MobileNetV2).

``bn(conv(x, w)) = conv(x, w * s) + (beta - mean * s)`` with ``s = gamma / sqrt(var + eps)`` per output channel:
:func:`fold_conv_bn` computes the folded ``(weight, bias)`` of every (conv, batch norm) pair of a network at once
with a few ``torch._foreach`` kernels, from the live parameters and running statistics (nothing cached: call it
inside the forward, e.g. inside a CUDA graph, so every replay folds the current values). :func:`conv_bias_act`
runs a folded pair as ``torch.cudnn_convolution_relu`` / ``torch.cudnn_convolution_add_relu`` on fp32 CUDA
tensors, so the batch norm, residual add and ReLU passes go. The fold moves one multiplication into the weights:
within fp32 rounding of ``bn(conv(x))``, not bit-identical. Elsewhere (CPU, other dtypes, no ReLU) the same math
in plain PyTorch ops.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["conv_bias_act", "fold_conv_bn"]


def fold_conv_bn(pairs: list[tuple[nn.Conv2d, nn.BatchNorm2d]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Eval-mode ``bn(conv(x))`` of each pair as ``conv(x, w * s) + (beta - mean * s)``, ``s = gamma /
    sqrt(var + eps)``, from the current parameters and running statistics (a few ``_foreach`` launches for all
    pairs; bias-free convs). Returns the folded ``(weight, bias)`` per pair, in order: weight shaped like
    ``conv.weight`` (C_out, C_in / groups, kH, kW), bias (C_out,), in the parameters' dtype and device."""
    bns = [bn for _, bn in pairs]
    scale = torch._foreach_add([bn.running_var for bn in bns], [float(bn.eps) for bn in bns])
    torch._foreach_rsqrt_(scale)
    torch._foreach_mul_(scale, [bn.weight for bn in bns])
    biases = torch._foreach_sub([bn.bias for bn in bns], torch._foreach_mul([bn.running_mean for bn in bns], scale))
    weights = torch._foreach_mul([conv.weight for conv, _ in pairs], [s.view(-1, 1, 1, 1) for s in scale])
    return list(zip(weights, biases, strict=True))


def conv_bias_act(x: torch.Tensor, wb: tuple[torch.Tensor, torch.Tensor], conv: nn.Conv2d, relu: bool,
                  z: torch.Tensor | None = None) -> torch.Tensor:
    """``[relu](conv2d(x, w, b) [+ z])`` with ``conv``'s geometry (stride, padding, dilation, groups) and the
    folded ``wb = (w, b)`` of :func:`fold_conv_bn`: x (N, C_in, H, W), z None or shaped like the output
    (N, C_out, OH, OW) -> (N, C_out, OH, OW). On fp32 CUDA with ``relu`` one cuDNN call with the bias, residual
    and ReLU fused (``torch.cudnn_convolution_relu`` / ``_add_relu``), elsewhere plain PyTorch ops."""
    w, b = wb
    args = (conv.stride, conv.padding, conv.dilation, conv.groups)
    if x.is_cuda and x.dtype == torch.float32 and relu:
        if z is None:
            return torch.cudnn_convolution_relu(x, w, b, *args)
        return torch.cudnn_convolution_add_relu(x, w, z, 1.0, b, *args)
    y = F.conv2d(x, w, b, *args)
    if z is not None:
        y = y + z
    return F.relu(y) if relu else y
