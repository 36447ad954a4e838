"""DenseNet blocks for inference (KernelBench level 3: 14_DenseNet121DenseBlock, 15_DenseNet121, 16_DenseNet201).

A dense block writes its input and each layer's new features once into one preallocated (N, C_total, H, W)
buffer (each layer reads its channel prefix as a strided slice) instead of re-concatenating every earlier
feature after each layer; batch norm + ReLU is one Triton kernel reading that slice (scale and shift from the
running statistics in the kernel); a transition's batch norm + ReLU + 2x2 average pool is one kernel and its
1x1 convolution (no bias, so it commutes with the average) runs on the pooled input, a quarter the size. Convolutions
stay cuDNN fp32. fp32 CUDA input with a contiguous (H, W) plane; elsewhere the PyTorch formulation.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._triton import tl, triton

__all__ = ["DenseBlock", "DenseNet", "TransitionLayer", "bn_relu", "bn_relu_avg2"]


@triton.jit
def _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps):
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    return scale, tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale


@triton.jit
def _bn_relu_kernel(x_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, HW, stride_n, stride_c,
                    BLOCK: tl.constexpr):
    """y[n, c] = relu(bn(x[n, c])) for one (n, c) plane block; x may be a channel slice (strided n, c)."""
    pid = tl.program_id(0)
    n, c = pid // C, pid % C
    scale, shift = _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    v = tl.load(x_ptr + n.to(tl.int64) * stride_n + c * stride_c + offs, mask=m, other=0.0)
    tl.store(y_ptr + pid.to(tl.int64) * HW + offs, tl.maximum(v * scale + shift, 0.0), mask=m)


@triton.jit
def _bn_relu_avg2_kernel(x_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, H, W, OH, OW, stride_n, stride_c,
                         BLOCK: tl.constexpr):
    """y[n, c, i, j] = mean of relu(bn(x)) over the 2x2 window at (2i, 2j) (AvgPool2d(2) floors odd sizes)."""
    pid = tl.program_id(0)
    n, c = pid // C, pid % C
    scale, shift = _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < OH * OW
    base = x_ptr + n.to(tl.int64) * stride_n + c * stride_c + (offs // OW) * 2 * W + (offs % OW) * 2
    acc = tl.maximum(tl.load(base, mask=m, other=0.0) * scale + shift, 0.0)
    acc += tl.maximum(tl.load(base + 1, mask=m, other=0.0) * scale + shift, 0.0)
    acc += tl.maximum(tl.load(base + W, mask=m, other=0.0) * scale + shift, 0.0)
    acc += tl.maximum(tl.load(base + W + 1, mask=m, other=0.0) * scale + shift, 0.0)
    tl.store(y_ptr + pid.to(tl.int64) * (OH * OW) + offs, acc * 0.25, mask=m)


def _fast(x: torch.Tensor, bn: nn.BatchNorm2d) -> bool:
    return (x.is_cuda and x.dtype == torch.float32 and bn.affine and bn.running_mean is not None
            and x.stride(3) == 1 and x.stride(2) == x.shape[3])


def bn_relu(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    """relu(bn(x)) with bn's running statistics, as a new contiguous tensor (x may be a channel slice)."""
    if not _fast(x, bn):
        return F.relu(F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps))
    n, c, h, w = x.shape
    y = torch.empty((n, c, h, w), device=x.device, dtype=x.dtype)
    block = min(1024, triton.next_power_of_2(h * w))
    _bn_relu_kernel[(n * c, triton.cdiv(h * w, block))](x, y, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                                                        bn.eps, c, h * w, x.stride(0), x.stride(1), BLOCK=block,
                                                        num_warps=4)
    return y


def bn_relu_avg2(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    """avg_pool2d(relu(bn(x)), 2)."""
    if not _fast(x, bn):
        return F.avg_pool2d(F.relu(F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0,
                                                bn.eps)), 2)
    n, c, h, w = x.shape
    oh, ow = h // 2, w // 2
    y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
    block = min(1024, triton.next_power_of_2(max(oh * ow, 1)))
    _bn_relu_avg2_kernel[(n * c, triton.cdiv(oh * ow, block))](x, y, bn.running_mean, bn.running_var, bn.weight,
                                                               bn.bias, bn.eps, c, h, w, oh, ow, x.stride(0),
                                                               x.stride(1), BLOCK=block, num_warps=4)
    return y


class DenseBlock(nn.Module):
    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(num_input_features + i * growth_rate), nn.ReLU(inplace=True),
                          nn.Conv2d(num_input_features + i * growth_rate, growth_rate, kernel_size=3, padding=1,
                                    bias=False), nn.Dropout(0.0))
            for i in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c0, h, w = x.shape
        total = c0 + sum(layer[2].out_channels for layer in self.layers)
        buf = torch.empty((n, total, h, w), device=x.device, dtype=x.dtype)
        buf[:, :c0].copy_(x)
        c = c0
        for layer in self.layers:
            bn, conv = layer[0], layer[2]
            f = F.conv2d(bn_relu(buf[:, :c], bn), conv.weight, None, 1, 1)  # Dropout(0.0) is the identity
            buf[:, c:c + f.shape[1]].copy_(f)
            c += f.shape[1]
        return buf


class TransitionLayer(nn.Module):
    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features), nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn, conv = self.transition[0], self.transition[2]
        return F.conv2d(bn_relu_avg2(x, bn), conv.weight)  # 1x1 conv (no bias) commutes with the 2x2 average


class DenseNet(nn.Module):
    """A DenseNet (KernelBench level 3's module layout and parameter names) with ``block_layers`` layers per dense
    block."""

    def __init__(self, block_layers: list[int], growth_rate: int = 32, num_classes: int = 1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
            nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
        num_features = 64
        self.dense_blocks = nn.ModuleList()
        self.transition_layers = nn.ModuleList()
        for i, num_layers in enumerate(block_layers):
            self.dense_blocks.append(DenseBlock(num_layers, num_features, growth_rate))
            num_features += num_layers * growth_rate
            if i != len(block_layers) - 1:
                self.transition_layers.append(TransitionLayer(num_features, num_features // 2))
                num_features //= 2
        self.final_bn = nn.BatchNorm2d(num_features)
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv, bn, pool = self.features[0], self.features[1], self.features[3]
        x = F.max_pool2d(bn_relu(F.conv2d(x, conv.weight, None, 2, 3), bn), pool.kernel_size, pool.stride,
                         pool.padding)
        for i, block in enumerate(self.dense_blocks):
            x = block(x)
            if i != len(self.dense_blocks) - 1:
                x = self.transition_layers[i](x)
        x = bn_relu(x, self.final_bn).mean(dim=(2, 3))
        return F.linear(x, self.classifier.weight, self.classifier.bias)
