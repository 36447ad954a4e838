"""Per-channel affine + activation, then the mean over the spatial dimensions (global average pooling)::

    y[b, c] = mean_s act(x[b, c, s] * weight[c] + bias[c])          act: none / relu / gelu (erf) / silu

Shapes: ``x`` (B, C, *spatial); ``weight``, ``bias`` (C,) or None; float32, fp32 accumulation; output (B, C).
Inference BatchNorm + activation + ``adaptive_avg_pool2d(., 1)`` after a bias-free convolution is
``weight = gamma / sqrt(var + eps)``, ``bias = beta - mean * weight``. Memory traffic: one read of ``x``
and a (B, C) write, against BatchNorm, activation (each a read and a write) and pooling in eager PyTorch.

Backward (``bias_act_mean_backward_launch``, CUDA, fp32/bf16/fp16): one kernel on the forward's grid reads ``x``
once, recomputes ``z = x * weight[c] + bias[c]`` and writes ``dx = dy[b, c] / S * act'(z) * weight[c]``, with
each (b, c) row's sums of ``dz * x`` and ``dz`` (fp32) from which ``dweight``, ``dbias`` are summed over the
batch. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._activation_backward import fused_act_grad
from ._fused_norm import ACTIVATIONS, _act, activate

__all__ = ["CONFIGS", "bias_act_mean", "bias_act_mean_backward_launch", "bias_act_mean_launch", "bias_act_mean_ref"]

#: TILE: elements (rows x BLOCK_N) per program and loop step; BLOCK_N at most MAX_BLOCK_N
CONFIGS = {
    "sm80": {"TILE": 4096, "MAX_BLOCK_N": 4096, "num_warps": 8},
    "sm86": {"TILE": 4096, "MAX_BLOCK_N": 2048, "num_warps": 8},
    "sm89": {"TILE": 4096, "MAX_BLOCK_N": 2048, "num_warps": 8},
    "sm90": {"TILE": 4096, "MAX_BLOCK_N": 4096, "num_warps": 8},
}
check_table(CONFIGS, "bias_act_mean")


def bias_act_mean_ref(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                      activation: str = "none") -> torch.Tensor:
    """PyTorch reference."""
    shape = [1, -1] + [1] * (x.dim() - 2)
    y = x
    if weight is not None:
        y = y * weight.view(shape)
    if bias is not None:
        y = y + bias.view(shape)
    return activate(y, activation).flatten(2).mean(dim=-1)


@triton.jit
def _bias_act_mean_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_channels, inner, HAS_W: tl.constexpr,
                          HAS_B: tl.constexpr, ACT: tl.constexpr, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    ch = rows % n_channels
    if HAS_W:
        w = tl.load(w_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    if HAS_B:
        b = tl.load(b_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
    for start in range(0, inner, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = rmask[:, None] & (cols < inner)[None, :]
        v = tl.load(x_ptr + rows[:, None] * inner + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        if HAS_W:
            v = v * w
        if HAS_B:
            v = v + b
        acc += tl.where(mask, _act(v, ACT), 0.0)
    tl.store(y_ptr + rows, (tl.sum(acc, 1) / inner).to(y_ptr.dtype.element_ty), mask=rmask)


def _check(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    if x.dim() < 3:
        raise ValueError(f"x must be (B, C, *spatial), got shape {tuple(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != x.shape[1]:
            raise ValueError(f"{name} must have {x.shape[1]} elements (one per channel), got {tuple(t.shape)}")


def bias_act_mean_launch(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                         activation: str = "none", config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (B, C, *spatial); returns (B, C)."""
    _check(x, weight, bias, activation)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    bsz, c = x.shape[:2]
    y = torch.empty(bsz, c, device=x.device, dtype=x.dtype)
    n_rows = bsz * c
    inner = xc.numel() // n_rows if n_rows else 0
    if n_rows:
        if inner == 0:
            return y.fill_(float("nan"))
        bn = min(triton.next_power_of_2(inner), cfg["MAX_BLOCK_N"])
        rows = max(1, cfg["TILE"] // bn)
        _bias_act_mean_kernel[(triton.cdiv(n_rows, rows),)](
            xc, weight.contiguous().view(-1) if weight is not None else xc,
            bias.contiguous().view(-1) if bias is not None else xc, y, n_rows, c, inner,
            HAS_W=weight is not None, HAS_B=bias is not None, ACT=ACTIVATIONS[activation], ROWS=rows, BLOCK_N=bn,
            num_warps=cfg["num_warps"])
    return y


@triton.jit
def _bias_act_mean_bwd_kernel(x_ptr, w_ptr, b_ptr, dy_ptr, dx_ptr, dwp_ptr, dbp_ptr, n_rows, n_channels, inner,
                              HAS_W: tl.constexpr, HAS_B: tl.constexpr, ACT: tl.constexpr, STORE_DX: tl.constexpr,
                              ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    ch = rows % n_channels
    if HAS_W:
        w = tl.load(w_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    if HAS_B:
        b = tl.load(b_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    g = (tl.load(dy_ptr + rows, mask=rmask, other=0.0).to(tl.float32) / inner)[:, None]
    acc_w = tl.zeros([ROWS, BLOCK_N], tl.float32)
    acc_b = tl.zeros([ROWS, BLOCK_N], tl.float32)
    for start in range(0, inner, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = rmask[:, None] & (cols < inner)[None, :]
        offs = rows[:, None] * inner + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        z = x
        if HAS_W:
            z = z * w
        if HAS_B:
            z = z + b
        dz = tl.where(mask, g, 0.0)
        if ACT != 0:
            dz = dz * fused_act_grad(z, ACT)
        if STORE_DX:
            if HAS_W:
                dx = dz * w
            else:
                dx = dz
            tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        acc_w += dz * x
        acc_b += dz
    tl.store(dwp_ptr + rows, tl.sum(acc_w, 1), mask=rmask)
    tl.store(dbp_ptr + rows, tl.sum(acc_b, 1), mask=rmask)


def bias_act_mean_backward_launch(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                                  dy: torch.Tensor, activation: str = "none", *, dx: bool = True,
                                  config: dict | None = None
                                  ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dweight, dbias)`` of :func:`bias_act_mean_ref` at ``x`` (B, C, *spatial) for the output gradient
    ``dy`` (B, C): ``dx`` contiguous in ``x``'s dtype (None with ``dx=False``), ``dweight``/``dbias`` in their
    parameter's dtype (summed in fp32; None where the parameter is None)."""
    _check(x, weight, bias, activation)
    bsz, c = x.shape[:2]
    if dy.shape != (bsz, c):
        raise ValueError(f"dy must have the output's shape {(bsz, c)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    gx = torch.empty_like(xc) if dx else None
    n_rows = bsz * c
    inner = xc.numel() // n_rows if n_rows else 0
    dwp = torch.zeros(n_rows, dtype=torch.float32, device=x.device)
    dbp = torch.zeros_like(dwp)
    if xc.numel():
        bn = min(triton.next_power_of_2(inner), cfg["MAX_BLOCK_N"])
        rows = max(1, cfg["TILE"] // bn)
        _bias_act_mean_bwd_kernel[(triton.cdiv(n_rows, rows),)](
            xc, weight.contiguous().view(-1) if weight is not None else xc,
            bias.contiguous().view(-1) if bias is not None else xc, dy.contiguous(), gx if dx else xc, dwp, dbp,
            n_rows, c, inner, HAS_W=weight is not None, HAS_B=bias is not None, ACT=ACTIVATIONS[activation],
            STORE_DX=dx, ROWS=rows, BLOCK_N=bn, num_warps=cfg["num_warps"])

    def total(part: torch.Tensor, like: torch.Tensor | None) -> torch.Tensor | None:
        return None if like is None else part.view(bsz, c).sum(0).view(like.shape).to(like.dtype)

    return gx, total(dwp, weight), total(dbp, bias)


def _bias_act_mean_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None (also for an empty
    spatial extent, whose mean is NaN)."""
    (x, weight, bias, activation), (dy,) = args, grads
    if dy is None or x.numel() == 0 or not on_kernels(x, dy, *[t for t in (weight, bias) if t is not None]):
        return None
    gx, dw, db = bias_act_mean_backward_launch(x, weight, bias, dy, activation, dx=needs[0])
    return gx, dw if needs[1] else None, db if needs[2] else None, None


@zoo_custom_op("cudal1::bias_act_mean", mutates_args=(), ref=bias_act_mean_ref, fast_backward=_bias_act_mean_backward)
def _op(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, activation: str) -> torch.Tensor:
    if x.is_cuda:
        return bias_act_mean_launch(x, weight, bias, activation)
    return bias_act_mean_ref(x, weight, bias, activation).contiguous()


@_op.register_fake
def _(x, weight, bias, activation):
    return x.new_empty(x.shape[0], x.shape[1])


def bias_act_mean(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None, *,
                  activation: str = "none") -> torch.Tensor:
    """``mean over spatial of act(x * weight[c] + bias[c])`` for float32 ``x`` (B, C, *spatial), ``weight``,
    ``bias`` (C,) or None; output (B, C). Triton on CUDA, the reference on CPU;
    ``torch.ops.cudal1.bias_act_mean``."""
    _check(x, weight, bias, activation)
    return call("bias_act_mean", x, weight, bias, activation)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_bias_act_mean_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                                         "y_ptr": "*fp32", "n_rows": "i64", "n_channels": "i32",
                                                         "inner": "i32"},
                               constexprs={"HAS_W": True, "HAS_B": True, "ACT": 3, "ROWS": 1, "BLOCK_N": 4096}),
                  TritonKernel("_bias_act_mean_bwd_kernel", {
                      "x_ptr": "*bf16", "w_ptr": "*bf16", "b_ptr": "*bf16", "dy_ptr": "*bf16", "dx_ptr": "*bf16",
                      "dwp_ptr": "*fp32", "dbp_ptr": "*fp32", "n_rows": "i64", "n_channels": "i32", "inner": "i32"},
                      constexprs={"HAS_W": True, "HAS_B": True, "ACT": 2, "STORE_DX": True, "ROWS": 1,
                                  "BLOCK_N": 4096})]
