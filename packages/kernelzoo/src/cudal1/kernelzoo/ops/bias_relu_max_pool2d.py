"""Per-channel bias + ReLU + 2x2 max pooling (stride 2, floor mode) of a convolution's output::

    y[b, c, i, j] = relu(max(x[b, c, 2i:2i+2, 2j:2j+2]) + bias[c])

which equals ``max_pool2d(relu(x + bias[c]), 2)`` exactly: adding a per-channel constant and ReLU are both
monotone, so they commute with the max. Shapes: ``x`` (B, C, H, W); ``bias`` (C,) or None; float32; output
(B, C, H // 2, W // 2). Memory traffic: one read of ``x`` and a quarter-sized write, against bias, ReLU and
pooling passes in eager PyTorch. NaN inputs are not propagated the way max_pool2d does.

Backward (CUDA, fp32/bf16/fp16): :mod:`._pool_backward`'s max-pool gather kernel over ``z = x + bias[c]``:
each window's ``dy`` goes to its argmax (PyTorch's rule: first maximum, last NaN) where ``relu`` passes it
(``z > 0`` or NaN, as the reference's autograd), and ``dbias`` is the per-channel sum of that gradient (fp32
partials per tile, summed after: deterministic). The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._pool_backward import CONFIGS as POOL_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._pool_backward import kernels, max_pool2d_backward_launch

__all__ = ["CONFIGS", "bias_relu_max_pool2d", "bias_relu_max_pool2d_launch", "bias_relu_max_pool2d_ref"]

#: BLOCK: output elements of one (b, c) plane per program
CONFIGS = {
    "sm80": {"BLOCK": 1024, "num_warps": 4},
    "sm86": {"BLOCK": 1024, "num_warps": 4},
    "sm89": {"BLOCK": 1024, "num_warps": 4},
    "sm90": {"BLOCK": 2048, "num_warps": 8},
}
check_table(CONFIGS, "bias_relu_max_pool2d")


def bias_relu_max_pool2d_ref(x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """PyTorch reference."""
    if bias is not None:
        x = x + bias.view(1, -1, 1, 1)
    return torch.nn.functional.max_pool2d(torch.relu(x), 2)


@triton.jit
def _bias_relu_max_pool2d_kernel(x_ptr, b_ptr, y_ptr, n_channels, height, width, out_h, out_w,
                                 HAS_B: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < out_h * out_w
    oh = offs // out_w
    ow = offs % out_w
    src = x_ptr + plane * height * width + (2 * oh) * width + 2 * ow
    a = tl.load(src, mask=mask, other=0.0)
    b = tl.load(src + 1, mask=mask, other=0.0)
    c = tl.load(src + width, mask=mask, other=0.0)
    d = tl.load(src + width + 1, mask=mask, other=0.0)
    m = tl.maximum(tl.maximum(a, b), tl.maximum(c, d)).to(tl.float32)
    if HAS_B:
        m = m + tl.load(b_ptr + plane % n_channels).to(tl.float32)
    m = tl.maximum(m, 0.0)
    tl.store(y_ptr + plane * out_h * out_w + offs, m.to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, bias: torch.Tensor | None) -> None:
    if x.dim() != 4:
        raise ValueError(f"x must be (B, C, H, W), got shape {tuple(x.shape)}")
    if x.shape[2] < 2 or x.shape[3] < 2:
        raise ValueError(f"x must be at least 2x2 to pool, got shape {tuple(x.shape)}")
    if bias is not None and bias.numel() != x.shape[1]:
        raise ValueError(f"bias must have {x.shape[1]} elements (one per channel), got shape {tuple(bias.shape)}")


def bias_relu_max_pool2d_launch(x: torch.Tensor, bias: torch.Tensor | None = None,
                                config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (B, C, H, W); returns (B, C, H // 2, W // 2)."""
    _check(x, bias)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    bsz, c, h, w = xc.shape
    oh, ow = h // 2, w // 2
    y = torch.empty(bsz, c, oh, ow, device=x.device, dtype=x.dtype)
    if y.numel():
        grid = (bsz * c, triton.cdiv(oh * ow, cfg["BLOCK"]))
        _bias_relu_max_pool2d_kernel[grid](xc, bias.contiguous().view(-1) if bias is not None else xc, y, c, h, w,
                                           oh, ow, HAS_B=bias is not None, BLOCK=cfg["BLOCK"],
                                           num_warps=cfg["num_warps"])
    return y


def _bias_relu_max_pool2d_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    x, bias = args
    (dy,) = grads
    if not on_kernels(x, *(() if bias is None else (bias,))):
        return None
    need_db = bias is not None and needs[1]
    if dy is None or not (needs[0] or need_db):
        return None, None
    return max_pool2d_backward_launch(x, dy, 2, 2, 0, bias=bias, relu=True, need_dx=needs[0], need_dbias=need_db)


@zoo_custom_op("cudal1::bias_relu_max_pool2d", mutates_args=(), ref=bias_relu_max_pool2d_ref,
               fast_backward=_bias_relu_max_pool2d_backward)
def _op(x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return bias_relu_max_pool2d_launch(x, bias) if x.is_cuda else bias_relu_max_pool2d_ref(x, bias).contiguous()


@_op.register_fake
def _(x, bias):
    return x.new_empty(x.shape[0], x.shape[1], x.shape[2] // 2, x.shape[3] // 2)


def bias_relu_max_pool2d(x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``max_pool2d(relu(x + bias[c]), 2)`` of float32 ``x`` (B, C, H, W), ``bias`` (C,) or None; output
    (B, C, H // 2, W // 2). Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.bias_relu_max_pool2d``."""
    _check(x, bias)
    return call("bias_relu_max_pool2d", x, bias)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_bias_relu_max_pool2d_kernel",
                               {"x_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n_channels": "i32",
                                "height": "i32", "width": "i32", "out_h": "i32", "out_w": "i32"},
                               constexprs={"HAS_B": True}),
                  *kernels(max2d={"KH": 2, "KW": 2, "SH": 2, "SW": 2, "PH": 0, "PW": 0, "RELU": True, "HAS_B": True,
                                  "NEED_DX": True, "NEED_DB": True})]
