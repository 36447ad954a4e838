"""Direct convolution tiles for Triton kernels that fuse a small convolution with its whole tail (KernelBench
level-2 ``Conv2d_*`` / ``Conv3d_*`` solutions in ``kernelbench_v0``).

With a few input channels (3 in those tasks) and a 3x3 (x3) kernel a convolution is 27 (81) multiply-adds per
output: nothing for the GPU, while eager runs it as a cuDNN implicit-GEMM launch, a bias pass and one kernel per
tail op, each a full read and write of the conv output. A fused kernel instead computes a (``BLOCK_C`` output
channels, ``BLOCK_P`` output positions) tile of one sample in fp32 registers with :func:`conv2d_tile` /
:func:`conv3d_tile` (plain fp32 FMAs, no TF32), applies the tail in registers and writes only the result.

The tiles cover what the tasks use: stride 1, no padding, dilation 1, one group, a square (cubic) kernel, any
small ``C_in`` (the input-channel loop is a runtime loop, the kernel taps are unrolled). :func:`direct_ok` says
whether a module and an input are of that kind; callers run their PyTorch formulation otherwise.

Also here: the activations these tails share, in forms that are exact to fp32 rounding over the whole range
(:func:`tanh`, :func:`softplus`, :func:`mish`, :func:`gelu`).
"""

from __future__ import annotations

import torch
import torch.nn as nn

from .._triton import tl, triton

__all__ = ["MAX_C_IN", "conv2d_tile", "conv3d_tile", "direct_ok", "gelu", "launch_conv2d_tail", "mish", "pos_block",
           "softplus", "tanh"]

MAX_C_IN = 16  #: largest input channel count the direct tiles are used for (beyond it cuDNN's GEMM wins)


@triton.jit
def conv2d_tile(x_ptr, w_ptr, n, c, cmask, oh, ow, pmask, C_IN, H, W, K: tl.constexpr,
                BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """Direct stride-1, unpadded 2-D conv, no bias: the (BLOCK_C out channels ``c``, BLOCK_P output positions
    ``(oh, ow)``) tile of sample ``n``; x is contiguous (N, C_IN, H, W), w contiguous (C, C_IN, K, K)."""
    acc = tl.zeros([BLOCK_C, BLOCK_P], tl.float32)
    for ci in range(C_IN):
        xb = x_ptr + (n * C_IN + ci).to(tl.int64) * H * W
        wb = w_ptr + (c * C_IN + ci) * (K * K)
        for kh in tl.static_range(K):
            for kw in tl.static_range(K):
                xv = tl.load(xb + (oh + kh) * W + ow + kw, mask=pmask, other=0.0)
                wv = tl.load(wb + kh * K + kw, mask=cmask, other=0.0)
                acc += wv[:, None] * xv[None, :]
    return acc


@triton.jit
def conv3d_tile(x_ptr, w_ptr, n, c, cmask, od, oh, ow, pmask, C_IN, D, H, W, K: tl.constexpr,
                BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """Direct stride-1, unpadded 3-D conv, no bias: the (BLOCK_C out channels ``c``, BLOCK_P output positions
    ``(od, oh, ow)``) tile of sample ``n``; x is contiguous (N, C_IN, D, H, W), w contiguous (C, C_IN, K, K, K)."""
    acc = tl.zeros([BLOCK_C, BLOCK_P], tl.float32)
    for ci in range(C_IN):
        xb = x_ptr + (n * C_IN + ci).to(tl.int64) * D * H * W
        wb = w_ptr + (c * C_IN + ci) * (K * K * K)
        for kd in range(K):  # runtime loop, K*K taps unrolled per step: 224 registers at (16, 256) on sm90, no spill
            for kh in tl.static_range(K):
                row = ((od + kd) * H + oh + kh) * W + ow
                for kw in tl.static_range(K):
                    xv = tl.load(xb + row + kw, mask=pmask, other=0.0)
                    wv = tl.load(wb + (kd * K + kh) * K + kw, mask=cmask, other=0.0)
                    acc += wv[:, None] * xv[None, :]
    return acc


@triton.jit
def tanh(x):
    """Overflow-free tanh: sign(x) (1 - 2 / (exp(2|x|) + 1)); absolute error ~1e-7."""
    t = 1.0 - 2.0 / (tl.exp(2.0 * tl.abs(x)) + 1.0)
    return tl.where(x < 0, -t, t)


@triton.jit
def softplus(x):
    """max(x, 0) + log1p(exp(-|x|)) with an exact-rounding log1p; equals torch's softplus (threshold 20)."""
    u = tl.exp(-tl.abs(x))
    w = 1.0 + u
    log1p_u = tl.where(w == 1.0, u, tl.log(w) * (u / (w - 1.0)))
    return tl.maximum(x, 0.0) + log1p_u


@triton.jit
def mish(x):
    """x tanh(softplus(x)) = x (u^2 + 2u) / (u^2 + 2u + 2) with u = exp(x): the identity
    tanh(log(1 + u)) = ((1 + u)^2 - 1) / ((1 + u)^2 + 1) has no cancellation at either end (relative error a few
    ulp everywhere); u is taken at min(x, 20), where the ratio is already 1 in fp32."""
    u = tl.exp(tl.minimum(x, 20.0))
    q = u * (u + 2.0)
    return x * (q / (q + 2.0))


@triton.jit
def gelu(x):
    """Exact (erf) GELU, as ``torch.nn.functional.gelu`` with approximate='none'."""
    return x * 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))


def direct_ok(conv: nn.Module, x: torch.Tensor) -> bool:
    """True where ``conv`` (an ``nn.Conv2d`` / ``nn.Conv3d``) on ``x`` is what the tiles compute: fp32 CUDA input,
    stride 1, no padding, dilation 1, one group, zero padding mode, a square (cubic) kernel, at most
    :data:`MAX_C_IN` input channels, a bias, and an output at least one position wide."""
    ks = conv.kernel_size
    dims = len(ks)
    return (x.is_cuda and x.dtype == torch.float32 and conv.weight.dtype == torch.float32
            and x.dim() == dims + 2 and conv.bias is not None
            and all(s == 1 for s in conv.stride) and all(d == 1 for d in conv.dilation)
            and isinstance(conv.padding, tuple) and all(p == 0 for p in conv.padding)
            and conv.groups == 1 and conv.padding_mode == "zeros" and len(set(ks)) == 1
            and conv.in_channels <= MAX_C_IN and all(s >= ks[0] for s in x.shape[2:]))


def pos_block(npos: int, cap: int = 256) -> int:
    """Positions per program: the next power of two of ``npos``, at most ``cap``."""
    return min(cap, triton.next_power_of_2(max(npos, 1)))


def launch_conv2d_tail(kernel, conv: nn.Conv2d, x: torch.Tensor, tensors: tuple = (), scalars: tuple = (),
                       out_channels: int | None = None, block_c: int | None = None,
                       pos_cap: int = 256) -> torch.Tensor:
    """Run a fused conv-and-tail ``kernel`` over one (sample, block of output positions) per program and return its
    output ``(N, out_channels or C_out, OH, OW)`` (x's dtype; a valid 2-D conv: ``OH = H - K + 1``).

    The kernel's arguments, the layout every such kernel in ``kernelbench_v0`` uses:
    ``(x, conv.weight, conv.bias, *tensors, out, C_IN, H, W, C, OH, OW, *scalars, K=, BLOCK_C=, BLOCK_P=)``;
    ``BLOCK_C`` defaults to ``C_out`` rounded up to a power of two, ``BLOCK_P`` is :func:`pos_block` capped at
    ``pos_cap``.
    """
    x = x.contiguous()
    n, c_in, h, w = x.shape
    c, k = conv.out_channels, conv.kernel_size[0]
    oh, ow = h - k + 1, w - k + 1
    out = torch.empty((n, out_channels or c, oh, ow), device=x.device, dtype=x.dtype)
    block_p = pos_block(oh * ow, pos_cap)
    kernel[(n, triton.cdiv(oh * ow, block_p))](
        x, conv.weight, conv.bias, *tensors, out, c_in, h, w, c, oh, ow, *scalars,
        K=k, BLOCK_C=block_c or triton.next_power_of_2(c), BLOCK_P=block_p, num_warps=4)
    return out

