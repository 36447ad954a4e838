"""Depthwise 2-D convolution (``nn.Conv2d`` with ``groups == in_channels == out_channels``), as
``torch.nn.functional.conv2d(x, weight, bias, stride, padding, groups=C)``: each channel convolved (cross-
correlated) with its own KH x KW filter, zero padding, plus an optional per-channel bias.

Shapes: ``x`` (N, C, H, W), ``weight`` (C, 1, KH, KW), ``bias`` (C,) or None; float32; output (N, C, OH, OW)
float32 with ``O = (I + 2 * padding - K) // stride + 1``. Memory-bound: one read of ``x``, one write of the
output (4*N*C*(H*W + OH*OW) bytes) and 2*KH*KW FLOP per output. One program per (image, channel,
BLOCK_H x BLOCK_W output tile); the taps are unrolled, each a masked load of the shifted tile (the overlap
is served from L1), the filter's KH*KW weights are scalars; fp32 multiply-adds in the order kh, kw.
cuDNN's fp32 depthwise kernels are far from the memory roofline at large sizes, which is where this wins.

Backward (CUDA, fp32/bf16/fp16; ``depthwise_conv2d_backward_launch``), two Triton kernels in the forward's tiling,
no forward recompute, each gradient only when wanted:

* ``dx`` (``_depthwise_conv2d_dx_kernel``): the transposed convolution as a gather, one program per input tile:
  ``dx[h, w] = sum over taps (kh, kw) with (h + PAD - kh) and (w + PAD - kw) multiples of the stride of
  dy[(h + PAD - kh) / S, (w + PAD - kw) / S] * weight[kh, kw]``: one read of ``dy``, one write of ``dx``.
* ``dweight`` and ``dbias`` (``_depthwise_conv2d_dw_kernel``): one program per output tile reads its ``dy``
  tile once and each tap's shifted ``x`` tile (the overlap from L1) and writes the tile's KH*KW + 1 (the bias's)
  fp32 partial sums, summed over images and tiles after: one read of ``x`` and ``dy``, deterministic.

Why not ``torch.nn.grad.conv2d_input`` / ``conv2d_weight`` (PyTorch's fp32 depthwise kernels): the same
access pattern in the forward ran much faster here than there, at a far higher bandwidth
(benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md), and PyTorch's weight gradient reduces each of the
C*KH*KW weights in a block of its own, re-reading ``x`` and ``dy`` per tap, where ``dweight`` here is one pass.
The backward kernels' own speed is not measured yet.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "depthwise_conv2d", "depthwise_conv2d_backward_launch", "depthwise_conv2d_launch",
           "depthwise_conv2d_ref"]

CONFIGS = {  # sm90 measured on an H100 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)
    "sm80": {"BLOCK_H": 16, "BLOCK_W": 64, "num_warps": 4},
    "sm86": {"BLOCK_H": 16, "BLOCK_W": 64, "num_warps": 4},
    "sm89": {"BLOCK_H": 16, "BLOCK_W": 64, "num_warps": 4},
    "sm90": {"BLOCK_H": 8, "BLOCK_W": 128, "num_warps": 4},
}
check_table(CONFIGS, "depthwise_conv2d")


def depthwise_conv2d_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: int = 1,
                         padding: int = 0) -> torch.Tensor:
    """PyTorch reference (cuDNN on CUDA)."""
    return torch.nn.functional.conv2d(x, weight, bias, stride, padding, 1, x.shape[1])


@triton.jit
def _depthwise_conv2d_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, H, W, OH, OW,
                             KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                             HAS_BIAS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    out_mask = (oh[:, None] < OH) & (ow[None, :] < OW)
    x_base = x_ptr + plane.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
    for kh in tl.static_range(KH):
        ih = oh * STRIDE - PAD + kh
        h_ok = out_mask & ((ih >= 0) & (ih < H))[:, None]
        for kw in tl.static_range(KW):
            iw = ow * STRIDE - PAD + kw
            m = h_ok & ((iw >= 0) & (iw < W))[None, :]
            v = tl.load(x_base + ih[:, None] * W + iw[None, :], mask=m, other=0.0)
            acc += v * tl.load(w_ptr + c * (KH * KW) + kh * KW + kw)
    if HAS_BIAS:
        acc += tl.load(b_ptr + c)
    y_off = plane.to(tl.int64) * OH * OW + oh[:, None] * OW + ow[None, :]
    tl.store(y_ptr + y_off, acc, mask=out_mask)


def _check(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    if x.dim() != 4 or weight.dim() != 4 or weight.shape[0] != x.shape[1] or weight.shape[1] != 1:
        raise ValueError(f"depthwise_conv2d takes x (N, C, H, W) and weight (C, 1, KH, KW), got {tuple(x.shape)} "
                         f"and {tuple(weight.shape)}")
    if bias is not None and bias.shape != (x.shape[1],):
        raise ValueError(f"bias must have shape ({x.shape[1]},), got {tuple(bias.shape)}")
    if x.dtype != torch.float32 or weight.dtype != torch.float32:
        raise TypeError(f"depthwise_conv2d takes float32 tensors, got {x.dtype} and {weight.dtype}")


def depthwise_conv2d_launch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: int = 1,
                            padding: int = 0, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel (square stride and padding, no dilation)."""
    _check(x, weight, bias)
    if stride < 1 or padding < 0:
        raise ValueError(f"stride must be >= 1 and padding >= 0, got stride={stride}, padding={padding}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    n, c, h, w = x.shape
    kh, kw = weight.shape[2:]
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"input {h}x{w} is too small for a {kh}x{kw} kernel with padding {padding}")
    xc, wc = x.contiguous(), weight.contiguous()
    y = torch.empty((n, c, oh, ow), device=x.device, dtype=torch.float32)
    if y.numel():
        bh = min(cfg["BLOCK_H"], triton.next_power_of_2(oh))
        bw = min(cfg["BLOCK_W"], triton.next_power_of_2(ow))
        grid = (n * c, triton.cdiv(oh, bh), triton.cdiv(ow, bw))
        _depthwise_conv2d_kernel[grid](xc, wc, bias.contiguous() if bias is not None else wc, y, c, h, w, oh, ow,
                                       KH=kh, KW=kw, STRIDE=stride, PAD=padding, HAS_BIAS=bias is not None,
                                       BLOCK_H=bh, BLOCK_W=bw, num_warps=cfg["num_warps"])
    return y


@triton.jit
def _depthwise_conv2d_dx_kernel(dy_ptr, w_ptr, dx_ptr, C, H, W, OH, OW,
                                KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                                BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    w = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    in_mask = (h[:, None] < H) & (w[None, :] < W)
    dy_base = dy_ptr + plane.to(tl.int64) * OH * OW
    acc = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
    for kh in tl.static_range(KH):
        th = h + PAD - kh  # oh * STRIDE for the output whose tap kh reads row h
        oh = th // STRIDE
        h_ok = (th >= 0) & (th % STRIDE == 0) & (oh < OH)
        for kw in tl.static_range(KW):
            tw = w + PAD - kw
            ow = tw // STRIDE
            m = in_mask & h_ok[:, None] & ((tw >= 0) & (tw % STRIDE == 0) & (ow < OW))[None, :]
            g = tl.load(dy_base + oh[:, None] * OW + ow[None, :], mask=m, other=0.0).to(tl.float32)
            acc += g * tl.load(w_ptr + c * (KH * KW) + kh * KW + kw).to(tl.float32)
    x_off = plane.to(tl.int64) * H * W + h[:, None] * W + w[None, :]
    tl.store(dx_ptr + x_off, acc.to(dx_ptr.dtype.element_ty), mask=in_mask)


@triton.jit
def _depthwise_conv2d_dw_kernel(x_ptr, dy_ptr, part_ptr, H, W, OH, OW,
                                KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                                BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0)
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    out_mask = (oh[:, None] < OH) & (ow[None, :] < OW)
    g = tl.load(dy_ptr + plane.to(tl.int64) * OH * OW + oh[:, None] * OW + ow[None, :], mask=out_mask,
                other=0.0).to(tl.float32)
    x_base = x_ptr + plane.to(tl.int64) * H * W
    tile = (plane.to(tl.int64) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(2) + tl.program_id(2)
    out = part_ptr + tile * (KH * KW + 1)  # the tile's KH*KW weight partials, then its bias partial
    for kh in tl.static_range(KH):
        ih = oh * STRIDE - PAD + kh
        h_ok = out_mask & ((ih >= 0) & (ih < H))[:, None]
        for kw in tl.static_range(KW):
            iw = ow * STRIDE - PAD + kw
            m = h_ok & ((iw >= 0) & (iw < W))[None, :]
            v = tl.load(x_base + ih[:, None] * W + iw[None, :], mask=m, other=0.0).to(tl.float32)
            tl.store(out + kh * KW + kw, tl.sum(tl.sum(v * g, 1), 0))
    tl.store(out + KH * KW, tl.sum(tl.sum(g, 1), 0))


def depthwise_conv2d_backward_launch(x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, stride: int = 1,
                                     padding: int = 0, need_dx: bool = True, need_dweight: bool = True,
                                     need_dbias: bool = False, bias_dtype: torch.dtype | None = None,
                                     config: dict | None = None
                                     ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dweight, dbias)`` of the depthwise conv of ``x`` (N, C, H, W) with ``weight`` (C, 1, KH, KW) for
    the output gradient ``dy`` (N, C, OH, OW); fp32/bf16/fp16. ``dx`` in ``x``'s dtype, ``dweight`` in
    ``weight``'s, ``dbias`` (C,) in ``bias_dtype`` (default ``weight``'s), the last two summed in fp32; each
    None unless wanted."""
    if x.dim() != 4 or weight.dim() != 4 or weight.shape[0] != x.shape[1] or weight.shape[1] != 1:
        raise ValueError(f"depthwise_conv2d takes x (N, C, H, W) and weight (C, 1, KH, KW), got {tuple(x.shape)} "
                         f"and {tuple(weight.shape)}")
    n, c, h, w = x.shape
    kh, kw = weight.shape[2:]
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    if tuple(dy.shape) != (n, c, oh, ow):
        raise ValueError(f"dy must have the output's shape {(n, c, oh, ow)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    dyc = dy.contiguous()
    dx = dw = db = None
    if need_dx:
        dx = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        if dx.numel():
            bh, bw = min(cfg["BLOCK_H"], triton.next_power_of_2(h)), min(cfg["BLOCK_W"], triton.next_power_of_2(w))
            _depthwise_conv2d_dx_kernel[(n * c, triton.cdiv(h, bh), triton.cdiv(w, bw))](
                dyc, weight.contiguous(), dx, c, h, w, oh, ow, KH=kh, KW=kw, STRIDE=stride, PAD=padding,
                BLOCK_H=bh, BLOCK_W=bw, num_warps=cfg["num_warps"])
    if need_dweight:
        bh, bw = min(cfg["BLOCK_H"], triton.next_power_of_2(oh)), min(cfg["BLOCK_W"], triton.next_power_of_2(ow))
        grid = (n * c, triton.cdiv(oh, bh), triton.cdiv(ow, bw))
        # every program writes its tile's partials: no zero fill (an empty batch has none to sum)
        parts = torch.empty((n, c, grid[1] * grid[2], kh * kw + 1), device=x.device, dtype=torch.float32)
        if parts.numel():
            _depthwise_conv2d_dw_kernel[grid](x.contiguous(), dyc, parts, h, w, oh, ow, KH=kh, KW=kw, STRIDE=stride,
                                              PAD=padding, BLOCK_H=bh, BLOCK_W=bw, num_warps=cfg["num_warps"])
        sums = parts.sum((0, 2))  # (C, taps)
        dw = sums[:, :kh * kw].reshape(weight.shape).to(weight.dtype)
        if need_dbias:
            db = sums[:, -1].to(bias_dtype or weight.dtype)
    elif need_dbias:
        db = dyc.sum((0, 2, 3), dtype=torch.float32).to(bias_dtype or weight.dtype)
    return dx, dw, db


def _depthwise_conv2d_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernels where they apply (see ``registry.kernel_backward``), else None."""
    x, weight, bias, stride, padding = args
    (dy,) = grads
    if not on_kernels(x, weight, *(() if bias is None else (bias,))):
        return None
    need_db = bias is not None and needs[2]
    if dy is None or not (needs[0] or needs[1] or need_db):
        return (None,) * 5
    grads_in = depthwise_conv2d_backward_launch(x, weight, dy, stride, padding, needs[0], needs[1], need_db,
                                                bias.dtype if bias is not None else None)
    return (*grads_in, None, None)


@zoo_custom_op("cudal1::depthwise_conv2d", mutates_args=(), ref=depthwise_conv2d_ref,
               fast_backward=_depthwise_conv2d_backward)
def _depthwise_conv2d_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: int,
                         padding: int) -> torch.Tensor:
    if x.is_cuda:
        return depthwise_conv2d_launch(x, weight, bias, stride, padding)
    return depthwise_conv2d_ref(x, weight, bias, stride, padding)


@_depthwise_conv2d_op.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: int, padding: int) -> torch.Tensor:
    _check(x, weight, bias)
    n, c, h, w = x.shape
    kh, kw = weight.shape[2:]
    return x.new_empty((n, c, (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1))


def depthwise_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride: int = 1,
                     padding: int = 0) -> torch.Tensor:
    """Depthwise conv of ``x`` (N, C, H, W) with ``weight`` (C, 1, KH, KW) and ``bias`` (C,) or None, float32
    -> (N, C, OH, OW) (Triton on CUDA, cuDNN/CPU reference otherwise); ``torch.ops.cudal1.depthwise_conv2d``."""
    return call("depthwise_conv2d", x, weight, bias, stride, padding)


#: for ``python -m cudal1.kernelzoo.compile_targets`` (compiled with the task's 3x3, stride 1, padding 1; forward
#: and backward)
TRITON_KERNELS = [TritonKernel(
    "_depthwise_conv2d_kernel",
    {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "C": "i32", "H": "i32", "W": "i32",
     "OH": "i32", "OW": "i32"},
    constexprs={"KH": 3, "KW": 3, "STRIDE": 1, "PAD": 1, "HAS_BIAS": True}),
    TritonKernel("_depthwise_conv2d_dx_kernel",
                 {"dy_ptr": "*fp32", "w_ptr": "*fp32", "dx_ptr": "*fp32", "C": "i32", "H": "i32", "W": "i32",
                  "OH": "i32", "OW": "i32"}, constexprs={"KH": 3, "KW": 3, "STRIDE": 1, "PAD": 1}),
    TritonKernel("_depthwise_conv2d_dw_kernel",
                 {"x_ptr": "*fp32", "dy_ptr": "*fp32", "part_ptr": "*fp32", "H": "i32", "W": "i32", "OH": "i32",
                  "OW": "i32"}, constexprs={"KH": 3, "KW": 3, "STRIDE": 1, "PAD": 1})]
