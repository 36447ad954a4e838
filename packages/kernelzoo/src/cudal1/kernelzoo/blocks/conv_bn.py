"""Eval-mode convolution + BatchNorm (+ residual) + ReLU as ONE cuDNN call per convolution (KernelBench level 3
ResNet solutions in ``kernelbench_v0``).

In eval mode a batch norm after a convolution is a per-output-channel affine map, so it folds into the
convolution exactly: ``bn(conv(x, w) + c) = conv(x, w * s) + (beta + (c - mean) * s)`` with
``s = gamma / sqrt(var + eps)``. :func:`fold` computes the folded weights and biases of many (conv, bn) pairs from
their *current* parameters and running statistics with a few ``torch._foreach`` launches (it runs inside every
forward: nothing is cached), and :func:`conv_act` runs the folded convolution with its bias, an optional residual
``z`` and ReLU fused by cuDNN (``torch.cudnn_convolution_relu`` / ``torch.cudnn_convolution_add_relu``, fp32 with
the process's TF32 setting, which the harness turns off), where eager runs the convolution, a batch norm, the add
and the ReLU as separate passes over the activation. Elsewhere (CPU, other dtypes) the same math in plain
PyTorch ops. The fold rounds differently from conv-then-normalise (one multiplication moved into the weight):
within fp32 tolerance, not bit-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["conv_act", "fold"]


def fold(pairs: Sequence[tuple[nn.Conv2d, nn.BatchNorm2d]]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Folded ``(weights, biases)`` of eval-mode ``conv -> bn`` pairs, one per pair, in order.

    weights[i]: ``conv.weight * s`` (``(C_out, C_in/groups, kh, kw)``, the weight's dtype); biases[i]: ``(C_out,)``,
    ``beta + (conv.bias - running_mean) * s`` (``conv.bias`` counted as 0 when absent), with
    ``s = gamma / sqrt(running_var + eps)`` from the batch norm's current running statistics.

    Raises:
        ValueError: a batch norm without affine parameters or running statistics (not an eval-mode affine map).
    """
    for conv, bn in pairs:
        if not bn.affine or bn.running_mean is None or bn.running_var is None:
            raise ValueError(f"fold needs affine batch norms with running statistics, got {bn!r}")
        if conv.weight.shape[0] != bn.num_features:
            raise ValueError(f"{conv!r} has {conv.weight.shape[0]} output channels, {bn!r} normalises "
                             f"{bn.num_features}")
    bns = [bn for _, bn in pairs]
    scale = torch._foreach_add([bn.running_var for bn in bns], [float(bn.eps) for bn in bns])
    torch._foreach_rsqrt_(scale)
    torch._foreach_mul_(scale, [bn.weight for bn in bns])
    means = [bn.running_mean if conv.bias is None else bn.running_mean - conv.bias for conv, bn in pairs]
    biases = torch._foreach_sub([bn.bias for bn in bns], torch._foreach_mul(means, scale))
    weights = torch._foreach_mul([conv.weight for conv, _ in pairs], [s.view(-1, 1, 1, 1) for s in scale])
    return weights, biases


def conv_act(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, conv: nn.Conv2d, relu: bool,
             z: torch.Tensor | None = None) -> torch.Tensor:
    """``[relu](conv2d(x, weight, bias) [+ z])`` with ``conv``'s stride, padding, dilation and groups.

    x: ``(N, C_in, H, W)``; weight/bias: from :func:`fold`; z: ``(N, C_out, H_out, W_out)`` or None (a residual
    needs ``relu``: cuDNN fuses add and ReLU together). fp32 CUDA: one cuDNN call; elsewhere PyTorch ops.
    """
    if z is not None and not relu:
        raise ValueError("conv_act fuses a residual only together with the ReLU; add it outside for relu=False")
    if isinstance(conv.padding, str) or conv.padding_mode != "zeros":
        raise ValueError(f"conv_act needs explicit zero padding, got {conv!r}")
    args = (conv.stride, conv.padding, conv.dilation, conv.groups)
    if x.is_cuda and x.dtype == torch.float32 and relu:
        if z is None:
            return torch.cudnn_convolution_relu(x, weight, bias, *args)
        return torch.cudnn_convolution_add_relu(x, weight, z, 1.0, bias, *args)
    y = F.conv2d(x, weight, bias, *args)
    if z is not None:
        y = y + z
    return F.relu(y) if relu else y
