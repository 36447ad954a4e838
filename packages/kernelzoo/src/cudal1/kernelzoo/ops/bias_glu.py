"""Per-channel bias + gated linear unit over the channel dimension of a convolution's output::

    a = x[:, :C] + bias[:C],   g = x[:, C:] + bias[C:]
    y = a * sigmoid(g)                                 (= F.glu(x + bias[c], dim=1))

Shapes: ``x`` (B, 2C, *spatial); ``bias`` (2C,) or None; float32, fp32 math; output (B, C, *spatial).
Memory traffic: one read of ``x`` and a half-sized write, against a bias pass (read + write) and the GLU in
eager PyTorch.

Backward (``bias_glu_backward_launch``, CUDA, fp32/bf16/fp16): one kernel on the forward's grid reads ``x`` and
``dy`` once, recomputes ``a`` and ``g`` and writes ``dx = cat(dy * sigmoid(g), dy * a * sigmoid(g) * (1 -
sigmoid(g)))`` along the channels, plus each tile's row sums of both halves; ``dbias`` is their sum over the
batch and the tiles (fp32). The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "bias_glu", "bias_glu_backward_launch", "bias_glu_launch", "bias_glu_ref"]

#: BLOCK: elements (rows x spatial) per program
CONFIGS = {
    "sm80": {"BLOCK": 2048, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 4096, "num_warps": 8},
}
check_table(CONFIGS, "bias_glu")


def bias_glu_ref(x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """PyTorch reference."""
    if bias is not None:
        x = x + bias.view([1, -1] + [1] * (x.dim() - 2))
    return torch.nn.functional.glu(x, dim=1)


@triton.jit
def _bias_glu_kernel(x_ptr, b_ptr, y_ptr, n_rows, n_channels, inner, HAS_B: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)  # rows of the output: (b, c)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rmask = rows < n_rows
    mask = rmask[:, None] & (cols < inner)[None, :]
    b = rows // n_channels
    c = rows % n_channels
    a_row = b * (2 * n_channels) + c
    a_off = a_row[:, None] * inner + cols[None, :]
    g_off = a_off + n_channels * inner
    a = tl.load(x_ptr + a_off, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(x_ptr + g_off, mask=mask, other=0.0).to(tl.float32)
    if HAS_B:
        a += tl.load(b_ptr + c, mask=rmask, other=0.0).to(tl.float32)[:, None]
        g += tl.load(b_ptr + c + n_channels, mask=rmask, other=0.0).to(tl.float32)[:, None]
    y = a / (1.0 + tl.exp(-g))
    tl.store(y_ptr + rows[:, None] * inner + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, bias: torch.Tensor | None) -> None:
    if x.dim() < 2 or x.shape[1] % 2:
        raise ValueError(f"x must be (B, 2C, ...) with an even channel count, got shape {tuple(x.shape)}")
    if bias is not None and bias.numel() != x.shape[1]:
        raise ValueError(f"bias must have {x.shape[1]} elements (one per channel), got shape {tuple(bias.shape)}")


def bias_glu_launch(x: torch.Tensor, bias: torch.Tensor | None = None, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (B, 2C, ...); returns (B, C, ...)."""
    _check(x, bias)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    c = x.shape[1] // 2
    y = torch.empty((x.shape[0], c, *x.shape[2:]), device=x.device, dtype=x.dtype)
    if y.numel():
        inner = y.numel() // (x.shape[0] * c)
        bn = min(triton.next_power_of_2(inner), cfg["BLOCK"])
        bm = max(1, cfg["BLOCK"] // bn)
        n_rows = x.shape[0] * c
        grid = (triton.cdiv(n_rows, bm), triton.cdiv(inner, bn))
        _bias_glu_kernel[grid](xc, bias.contiguous().view(-1) if bias is not None else xc, y, n_rows, c, inner,
                               HAS_B=bias is not None, BM=bm, BN=bn, num_warps=cfg["num_warps"])
    return y


@triton.jit
def _bias_glu_bwd_kernel(x_ptr, b_ptr, dy_ptr, dx_ptr, dbp_ptr, n_rows, n_channels, inner, HAS_B: tl.constexpr,
                         STORE_DX: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)  # rows of the output: (b, c)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rmask = rows < n_rows
    mask = rmask[:, None] & (cols < inner)[None, :]
    c = rows % n_channels
    a_off = ((rows // n_channels) * (2 * n_channels) + c)[:, None] * inner + cols[None, :]
    g_off = a_off + n_channels * inner
    a = tl.load(x_ptr + a_off, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(x_ptr + g_off, mask=mask, other=0.0).to(tl.float32)
    if HAS_B:
        a += tl.load(b_ptr + c, mask=rmask, other=0.0).to(tl.float32)[:, None]
        g += tl.load(b_ptr + c + n_channels, mask=rmask, other=0.0).to(tl.float32)[:, None]
    dy = tl.load(dy_ptr + rows[:, None] * inner + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-g))
    da = dy * s
    dg = da * a * (1.0 - s)
    if STORE_DX:
        tl.store(dx_ptr + a_off, da.to(dx_ptr.dtype.element_ty), mask=mask)
        tl.store(dx_ptr + g_off, dg.to(dx_ptr.dtype.element_ty), mask=mask)
    if HAS_B:  # this tile's share of dbias[c] and dbias[C + c]: (2, rows, column tiles) partials
        part = rows * tl.num_programs(1) + tl.program_id(1)
        tl.store(dbp_ptr + part, tl.sum(da, 1), mask=rmask)
        tl.store(dbp_ptr + n_rows * tl.num_programs(1) + part, tl.sum(dg, 1), mask=rmask)


def bias_glu_backward_launch(x: torch.Tensor, bias: torch.Tensor | None, dy: torch.Tensor, *, dx: bool = True,
                             config: dict | None = None) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dbias)`` of :func:`bias_glu_ref` at ``x`` (B, 2C, ...), ``bias`` (2C,) or None for the output
    gradient ``dy`` (B, C, ...): ``dx`` contiguous in ``x``'s dtype (None with ``dx=False``), ``dbias`` in
    ``bias``'s dtype (summed in fp32; None without a bias)."""
    _check(x, bias)
    c = x.shape[1] // 2
    if dy.shape != (x.shape[0], c, *x.shape[2:]):
        raise ValueError(f"dy must have the output's shape {(x.shape[0], c, *x.shape[2:])}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc, dyc = x.contiguous(), dy.contiguous()
    gx = torch.empty_like(xc) if dx else None
    n_rows = x.shape[0] * c
    inner = dy.numel() // n_rows if n_rows else 0
    bn = min(triton.next_power_of_2(max(inner, 1)), cfg["BLOCK"])
    bm = max(1, cfg["BLOCK"] // bn)
    grid = (triton.cdiv(n_rows, bm), triton.cdiv(inner, bn))
    parts = torch.zeros((2, x.shape[0], c, grid[1]), dtype=torch.float32, device=x.device)
    if dy.numel():
        _bias_glu_bwd_kernel[grid](xc, bias.contiguous().view(-1) if bias is not None else xc, dyc,
                                   gx if dx else xc, parts, n_rows, c, inner, HAS_B=bias is not None, STORE_DX=dx,
                                   BM=bm, BN=bn, num_warps=cfg["num_warps"])
    db = parts.sum((1, 3)).view(bias.shape).to(bias.dtype) if bias is not None else None
    return gx, db


def _bias_glu_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, bias), (dy,) = args, grads
    if dy is None or not on_kernels(x, dy, *([] if bias is None else [bias])):
        return None
    gx, db = bias_glu_backward_launch(x, bias, dy, dx=needs[0])
    return gx, db if needs[1] else None


@zoo_custom_op("cudal1::bias_glu", mutates_args=(), ref=bias_glu_ref, fast_backward=_bias_glu_backward)
def _op(x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return bias_glu_launch(x, bias) if x.is_cuda else bias_glu_ref(x, bias).contiguous()


@_op.register_fake
def _(x, bias):
    return x.new_empty((x.shape[0], x.shape[1] // 2, *x.shape[2:]))


def bias_glu(x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``glu(x + bias[c], dim=1)`` of float32 ``x`` (B, 2C, ...), ``bias`` (2C,) or None; output (B, C, ...).
    Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.bias_glu``."""
    _check(x, bias)
    return call("bias_glu", x, bias)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_bias_glu_kernel", {"x_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32",
                                                    "n_rows": "i64", "n_channels": "i32", "inner": "i32"},
                               constexprs={"HAS_B": True, "BM": 1, "BN": 2048}),
                  TritonKernel("_bias_glu_bwd_kernel", {"x_ptr": "*bf16", "b_ptr": "*bf16", "dy_ptr": "*bf16",
                                                        "dx_ptr": "*bf16", "dbp_ptr": "*fp32", "n_rows": "i64",
                                                        "n_channels": "i32", "inner": "i32"},
                               constexprs={"HAS_B": True, "STORE_DX": True, "BM": 1, "BN": 2048})]
