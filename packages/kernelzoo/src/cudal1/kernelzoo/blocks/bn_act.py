"""Eval-mode batch norm + activation (+ residual) as one elementwise pass (KernelBench level 3: ResNet, MobileNet,
EfficientNet solutions in ``kernelbench_v0``): ``act(bn(a) [+ s | + bn2(s)])`` over flat NCHW, scale and shift
computed in the kernel from the running statistics, where eager runs a batch norm, an add and an activation, each a
full read and write. fp32 CUDA input; elsewhere the PyTorch formulation.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._triton import tl, triton

__all__ = ["NONE", "RELU", "RELU6", "bn_act"]

NONE, RELU, RELU6 = 0, 1, 2  #: activation codes of :func:`bn_act`


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
    """``act(bn(a) [+ res | + res_bn(res)])`` in ONE pass over NCHW ``a`` (act: :data:`NONE`, :data:`RELU`,
    :data:`RELU6`), every batch norm from its running statistics; a new contiguous tensor."""
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

