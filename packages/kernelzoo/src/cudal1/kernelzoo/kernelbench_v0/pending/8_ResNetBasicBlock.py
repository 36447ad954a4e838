"""KernelBench level 3, 8_ResNetBasicBlock (x: (10, 3, 224, 224) fp32; conv3x3 3 -> 64 + BatchNorm + ReLU,
conv3x3 64 -> 64 + BatchNorm, plus the downsample 1x1 conv 3 -> 64 + BatchNorm, in-place add, ReLU; output
(10, 64, 224, 224), 128 MB). The harness evaluates both models in eval mode, so every batch norm is the
per-channel affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager runs six elementwise passes over 128 MB tensors (batch norm, ReLU, batch norm, downsample batch norm, add,
ReLU: ~1.4 GB of traffic). Here the convolutions stay cuDNN fp32 (no TF32) and the rest is two Triton passes:
relu(bn1(a)), and relu(bn2(b) + bn_d(downsample conv)) reading both conv outputs once (~0.64 GB in all).
Expected: ~1.15x (eager reference 1.94 ms on an H100; ~0.25 ms of memory traffic and 4 launches removed).
Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_act_kernel(a_ptr, s_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, rm2_ptr, rv2_ptr, g2_ptr, b2_ptr, eps2,
                   total, C, HW, ACT: tl.constexpr, RES: tl.constexpr, BLOCK: tl.constexpr):
    """Flat NCHW: y = act(bn(a) [+ s | + bn2(s)]) (RES 0: no residual, 1: plain, 2: batch-normed residual;
    ACT 0: none, 1: ReLU, 2: ReLU6)."""
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
    if ACT >= 1:
        v = tl.maximum(v, 0.0)
    if ACT == 2:
        v = tl.minimum(v, 6.0)
    tl.store(y_ptr + offs, v, mask=m)


def _bn(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)


def bn_act(a: torch.Tensor, bn: nn.BatchNorm2d, act: int, res: torch.Tensor | None = None,
           res_bn: nn.BatchNorm2d | None = None) -> torch.Tensor:
    """act(bn(a) + res_bn(res)) in ONE pass (act 0: none, 1: ReLU, 2: ReLU6) (res optional, res_bn optional), bn from its running statistics."""
    bns = [bn] + ([res_bn] if res_bn is not None else [])
    if not (a.is_cuda and a.dtype == torch.float32 and all(b.affine and b.running_mean is not None for b in bns)
            and (res is None or res.dtype == a.dtype)):
        v = _bn(a, bn)
        if res is not None:
            v = v + (_bn(res, res_bn) if res_bn is not None else res)
        return v.clamp(0.0, 6.0) if act == 2 else (F.relu(v) if act == 1 else v)
    a = a.contiguous()
    s = res.contiguous() if res is not None else a
    b2 = res_bn if res_bn is not None else bn  # unused pointers unless RES == 2
    y = torch.empty_like(a)
    total = a.numel()
    _bn_act_kernel[(triton.cdiv(total, 1024),)](
        a, s, y, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps,
        b2.running_mean, b2.running_var, b2.weight, b2.bias, b2.eps, total, a.shape[1], a.shape[2] * a.shape[3],
        ACT=act, RES=0 if res is None else (2 if res_bn is not None else 1), BLOCK=1024, num_warps=4)
    return y


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion))
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act(self.conv1(x), self.bn1, 1)
        return bn_act(self.conv2(out), self.bn2, 1, self.downsample[0](x), self.downsample[1])
