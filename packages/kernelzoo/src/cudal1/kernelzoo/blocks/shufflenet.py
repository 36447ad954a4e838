"""ShuffleNet blocks for inference (KernelBench level 3: 26_ShuffleNet; the same kernels as the 25_ShuffleNetUnit
solution): the passes between a unit's cuDNN convolutions fused into three Triton kernels, every batch norm from
its running statistics (scale and shift computed in the kernel):

* :func:`bn_act_shuffle`: batch norm (+ ReLU) written straight to the channel-shuffled position (one pass instead
  of eager's batch norm, ReLU and transpose copy);
* :func:`bn_relu_add`: relu(bn(a)) + s or + bn_s(s) (the unit's output with its shortcut) in one pass;
* :func:`bn_relu_mean`: the global average pool of relu(bn(a)) (the network's head) as one read of ``a``.

fp32 CUDA input; elsewhere the PyTorch formulation.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._triton import tl, triton

__all__ = ["ShuffleNetUnit", "bn_act_shuffle", "bn_relu_add", "bn_relu_mean"]


@triton.jit
def _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps):
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    return scale, tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale


@triton.jit
def _bn_act_shuffle_kernel(x_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, HW, G,
                           RELU: tl.constexpr, BLOCK: tl.constexpr):
    """Plane (n, c) of x, batch-normed (and ReLU'd), written to channel (c % (C/G)) * G + c // (C/G) of y
    (ChannelShuffle(G); G = 1 keeps the channel)."""
    pid = tl.program_id(0)
    n, c = pid // C, pid % C
    cg = C // G
    dst = n * C + (c % cg) * G + c // cg
    scale, shift = _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    v = tl.load(x_ptr + pid.to(tl.int64) * HW + offs, mask=m, other=0.0) * scale + shift
    if RELU:
        v = tl.maximum(v, 0.0)
    tl.store(y_ptr + dst.to(tl.int64) * HW + offs, v, mask=m)


@triton.jit
def _bn_relu_add_kernel(a_ptr, s_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps,
                        rm2_ptr, rv2_ptr, g2_ptr, b2_ptr, eps2, C, HW, SC_BN: tl.constexpr, BLOCK: tl.constexpr):
    """y = relu(bn(a)) + (bn2(s) if SC_BN else s), plane (n, c) per program row."""
    pid = tl.program_id(0)
    c = pid % C
    scale, shift = _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    base = pid.to(tl.int64) * HW + offs
    v = tl.maximum(tl.load(a_ptr + base, mask=m, other=0.0) * scale + shift, 0.0)
    s = tl.load(s_ptr + base, mask=m, other=0.0)
    if SC_BN:
        scale2, shift2 = _bn_scale_shift(c, rm2_ptr, rv2_ptr, g2_ptr, b2_ptr, eps2)
        s = s * scale2 + shift2
    tl.store(y_ptr + base, v + s, mask=m)


@triton.jit
def _bn_relu_mean_kernel(a_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, HW, BLOCK: tl.constexpr):
    """y[n, c] = mean over the (n, c) plane of relu(bn(a)); one program per plane."""
    pid = tl.program_id(0)
    scale, shift = _bn_scale_shift(pid % C, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < HW
        v = tl.load(a_ptr + pid.to(tl.int64) * HW + offs, mask=m, other=0.0)
        acc += tl.where(m, tl.maximum(v * scale + shift, 0.0), 0.0)
    tl.store(y_ptr + pid, tl.sum(acc, axis=0) / HW)


def _bn(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)


def _ok(x: torch.Tensor, *bns: nn.BatchNorm2d) -> bool:
    return x.is_cuda and x.dtype == torch.float32 and all(bn.affine and bn.running_mean is not None for bn in bns)


def _grid(x: torch.Tensor) -> tuple[tuple[int, int], int]:
    n, c, h, w = x.shape
    block = min(1024, triton.next_power_of_2(h * w))
    return (n * c, triton.cdiv(h * w, block)), block


def bn_act_shuffle(x: torch.Tensor, bn: nn.BatchNorm2d, relu: bool, groups: int) -> torch.Tensor:
    """channel_shuffle(act(bn(x)), groups) as one pass (groups 1: no shuffle)."""
    n, c, h, w = x.shape
    if not _ok(x, bn):
        y = _bn(x, bn)
        y = F.relu(y) if relu else y
        return y.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)
    x = x.contiguous()
    y = torch.empty_like(x)
    grid, block = _grid(x)
    _bn_act_shuffle_kernel[grid](x, y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps, c, h * w,
                                 groups, RELU=relu, BLOCK=block, num_warps=4)
    return y


def bn_relu_add(a: torch.Tensor, bn: nn.BatchNorm2d, s: torch.Tensor, bn_s: nn.BatchNorm2d | None) -> torch.Tensor:
    """relu(bn(a)) + bn_s(s) (s itself when bn_s is None) as one pass."""
    if not _ok(a, bn, *([bn_s] if bn_s is not None else [])) or s.dtype != a.dtype:
        return F.relu(_bn(a, bn)) + (s if bn_s is None else _bn(s, bn_s))
    a, s = a.contiguous(), s.contiguous()
    y = torch.empty_like(a)
    b2 = bn_s if bn_s is not None else bn  # unused pointers when there is no shortcut batch norm
    grid, block = _grid(a)
    _bn_relu_add_kernel[grid](a, s, y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps,
                              b2.running_mean, b2.running_var, b2.weight, b2.bias, b2.eps, a.shape[1],
                              a.shape[2] * a.shape[3], SC_BN=bn_s is not None, BLOCK=block, num_warps=4)
    return y


def bn_relu_mean(a: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    """relu(bn(a)).mean((2, 3)) -> (N, C), reading ``a`` once."""
    if not _ok(a, bn):
        return F.relu(_bn(a, bn)).mean(dim=(2, 3))
    a = a.contiguous()
    n, c, h, w = a.shape
    y = torch.empty((n, c), device=a.device, dtype=a.dtype)
    block = min(1024, triton.next_power_of_2(h * w))
    _bn_relu_mean_kernel[(n * c,)](a, y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps, c, h * w,
                                   BLOCK=block, num_warps=4)
    return y


class ChannelShuffle(nn.Module):
    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups


class ShuffleNetUnit(nn.Module):
    """KernelBench's ShuffleNet unit (same parameter names): grouped 1x1 conv + BN + ReLU, depthwise 3x3 conv + BN,
    channel shuffle, grouped 1x1 conv + BN + ReLU, plus the shortcut (identity or 1x1 conv + BN)."""

    def __init__(self, in_channels: int, out_channels: int, groups: int = 3):
        super().__init__()
        assert out_channels % 4 == 0
        mid_channels = out_channels // 4
        self.conv1 = nn.Conv2d(in_channels, mid_channels, kernel_size=1, stride=1, padding=0, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, kernel_size=3, stride=1, padding=1, groups=mid_channels,
                               bias=False)
        self.bn2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, out_channels, kernel_size=1, stride=1, padding=0, groups=groups,
                               bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.shuffle = ChannelShuffle(groups)
        if in_channels == out_channels:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act_shuffle(self.conv1(x), self.bn1, True, 1)
        out = bn_act_shuffle(self.conv2(out), self.bn2, False, self.shuffle.groups)
        if len(self.shortcut) == 0:
            return bn_relu_add(self.conv3(out), self.bn3, x, None)
        return bn_relu_add(self.conv3(out), self.bn3, self.shortcut[0](x), self.shortcut[1])
