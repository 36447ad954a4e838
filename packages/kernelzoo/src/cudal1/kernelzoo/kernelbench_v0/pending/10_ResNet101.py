"""KernelBench level 3, 10_ResNet101 (x: (10, 3, 224, 224) fp32; ResNet-101: 7x7 stem conv + BatchNorm + ReLU +
max pool, 3/4/23/3 bottleneck blocks (1x1, 3x3, 1x1 convs each followed by BatchNorm, ReLU after the first two,
residual add (downsample 1x1 conv + BatchNorm on the first block of a stage) then ReLU), global average pool,
Linear -> (10, 1000)). The harness evaluates both models in eval mode, so every batch norm is the per-channel
affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager runs every elementwise step as its own kernel over the full activation: per bottleneck batch norm, ReLU,
batch norm, ReLU, batch norm, (downsample batch norm,) in-place add, ReLU: 7-8 launches and as many read/write
passes. Here the convolutions stay cuDNN fp32 (no TF32) and the steps between them are ONE Triton pass each:
bn+ReLU after conv1 and conv2, and relu(bn3(a) + identity) -- or relu(bn3(a) + bn_d(downsample conv)) -- after
conv3. That is 3 elementwise launches per block instead of 7-8 (about 100 launches fewer over the network) and
roughly half the elementwise memory traffic. Expected: ~1.2x (eager reference 10.9 ms on an H100).
Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_act_kernel(a_ptr, s_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, rm2_ptr, rv2_ptr, g2_ptr, b2_ptr, eps2,
                   total, C, HW, RELU: tl.constexpr, RES: tl.constexpr, BLOCK: tl.constexpr):
    """Flat NCHW: y = act(bn(a) [+ s | + bn2(s)]) (RES 0: no residual, 1: plain, 2: batch-normed residual)."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    c = ((offs // HW) % C).to(tl.int32)
    scale = tl.load(g_ptr + c, mask=m, other=1.0) / tl.sqrt(tl.load(rv_ptr + c, mask=m, other=1.0) + eps)
    shift = tl.load(b_ptr + c, mask=m, other=0.0) - tl.load(rm_ptr + c, mask=m, other=0.0) * scale
    v = tl.load(a_ptr + offs, mask=m, other=0.0) * scale + shift
    if RES == 1:
        v += tl.load(s_ptr + offs, mask=m, other=0.0)
    if RES == 2:
        scale2 = tl.load(g2_ptr + c, mask=m, other=1.0) / tl.sqrt(tl.load(rv2_ptr + c, mask=m, other=1.0) + eps2)
        shift2 = tl.load(b2_ptr + c, mask=m, other=0.0) - tl.load(rm2_ptr + c, mask=m, other=0.0) * scale2
        v += tl.load(s_ptr + offs, mask=m, other=0.0) * scale2 + shift2
    if RELU:
        v = tl.maximum(v, 0.0)
    tl.store(y_ptr + offs, v, mask=m)


def _bn(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)


def bn_act(a: torch.Tensor, bn: nn.BatchNorm2d, relu: bool, res: torch.Tensor | None = None,
           res_bn: nn.BatchNorm2d | None = None) -> torch.Tensor:
    """act(bn(a) + res_bn(res)) in ONE pass (res optional, res_bn optional), bn from its running statistics."""
    bns = [bn] + ([res_bn] if res_bn is not None else [])
    if not (a.is_cuda and a.dtype == torch.float32 and all(b.affine and b.running_mean is not None for b in bns)
            and (res is None or res.dtype == a.dtype)):
        v = _bn(a, bn)
        if res is not None:
            v = v + (_bn(res, res_bn) if res_bn is not None else res)
        return F.relu(v) if relu else v
    a = a.contiguous()
    s = res.contiguous() if res is not None else a
    b2 = res_bn if res_bn is not None else bn  # unused pointers unless RES == 2
    y = torch.empty_like(a)
    total = a.numel()
    _bn_act_kernel[(triton.cdiv(total, 1024),)](
        a, s, y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps,
        b2.running_mean, b2.running_var, b2.weight, b2.bias, b2.eps, total, a.shape[1], a.shape[2] * a.shape[3],
        RELU=relu, RES=0 if res is None else (2 if res_bn is not None else 1), BLOCK=1024, num_warps=4)
    return y


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.conv3 = nn.Conv2d(out_channels, out_channels * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act(self.conv1(x), self.bn1, True)
        out = bn_act(self.conv2(out), self.bn2, True)
        if self.downsample is None:
            return bn_act(self.conv3(out), self.bn3, True, x)
        return bn_act(self.conv3(out), self.bn3, True, self.downsample[0](x), self.downsample[1])


class ModelNew(nn.Module):
    def __init__(self, layers, num_classes=1000):
        super().__init__()
        self.in_channels = 64
        self.conv1 = nn.Conv2d(3, self.in_channels, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.in_channels)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)

    def _make_layer(self, out_channels, blocks, stride=1):
        downsample = None
        if stride != 1 or self.in_channels != out_channels * Bottleneck.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.in_channels, out_channels * Bottleneck.expansion, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(out_channels * Bottleneck.expansion))
        layers = [Bottleneck(self.in_channels, out_channels, stride, downsample)]
        self.in_channels = out_channels * Bottleneck.expansion
        layers += [Bottleneck(self.in_channels, out_channels) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(bn_act(self.conv1(x), self.bn1, True))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean(dim=(2, 3)))
