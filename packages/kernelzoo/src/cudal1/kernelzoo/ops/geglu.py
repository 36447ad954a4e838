"""GeGLU gate: ``y = gelu(gate) * up``, elementwise, with the tanh approximation (Gemma's ``gelu_pytorch_tanh``)
or the exact erf form.

Shapes: ``gate`` and ``up`` the same shape (the outputs of a gated MLP's two projections); fp32, bf16, fp16
(fp32 math, one rounding at the store; fp64 runs the reference); output like ``gate``, contiguous. Two reads
and one write, against a GELU (read + write) and a product (two reads + write) in eager PyTorch.

Backward (``geglu_backward_launch``, CUDA, fp32/bf16/fp16): one kernel reads ``gate``, ``up``, ``dy`` once and
writes ``dgate = dy * up * gelu'(gate)`` and ``dup = dy * gelu(gate)``; the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._elementwise import CONFIGS

__all__ = ["CONFIGS", "geglu", "geglu_backward_launch", "geglu_launch", "geglu_ref"]

_APPROX = ("tanh", "none")


def geglu_ref(gate: torch.Tensor, up: torch.Tensor, approximate: str = "tanh") -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.gelu(gate, approximate=approximate) * up


@triton.jit
def _geglu_kernel(g_ptr, u_ptr, y_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask).to(tl.float32)
    if TANH:
        inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)  # sqrt(2 / pi)
        t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0  # tanh
        y = 0.5 * g * (1.0 + t) * u
    else:
        y = 0.5 * g * (1.0 + tl.erf(g * 0.7071067811865476)) * u
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _check(gate: torch.Tensor, up: torch.Tensor, approximate: str) -> None:
    if gate.shape != up.shape or gate.dtype != up.dtype:
        raise ValueError(f"gate and up must have one shape and dtype, got {tuple(gate.shape)} {gate.dtype} and "
                         f"{tuple(up.shape)} {up.dtype}")
    if approximate not in _APPROX:
        raise ValueError(f"approximate must be one of {_APPROX}, got {approximate!r}")


def geglu_launch(gate: torch.Tensor, up: torch.Tensor, approximate: str = "tanh",
                 config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; a new contiguous output."""
    _check(gate, up, approximate)
    gate, up = gate.contiguous(), up.contiguous()
    out = torch.empty_like(gate)
    cfg = config or pick(CONFIGS, gate.device if gate.is_cuda else None)
    n = gate.numel()
    if n:
        _geglu_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](gate, up, out, n, TANH=approximate == "tanh",
                                                        BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return out


@triton.jit
def _geglu_bwd_kernel(g_ptr, u_ptr, dy_ptr, dg_ptr, du_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask).to(tl.float32)
    if TANH:
        inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)
        t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
        act = 0.5 * g * (1.0 + t)
        d_act = 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 0.134145 * g * g)
    else:
        cdf = 0.5 * (1.0 + tl.erf(g * 0.7071067811865476))
        act = g * cdf
        d_act = cdf + g * 0.3989422804014327 * tl.exp(-0.5 * g * g)  # 1 / sqrt(2 pi)
    tl.store(dg_ptr + offs, (dy * u * d_act).to(dg_ptr.dtype.element_ty), mask=mask)
    tl.store(du_ptr + offs, (dy * act).to(du_ptr.dtype.element_ty), mask=mask)


def geglu_backward_launch(gate: torch.Tensor, up: torch.Tensor, dy: torch.Tensor, approximate: str = "tanh",
                          config: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dgate, dup)`` of ``gelu(gate, approximate) * up`` for the output gradient ``dy`` (all one shape);
    contiguous, in the inputs' dtype."""
    _check(gate, up, approximate)
    if dy.shape != gate.shape:
        raise ValueError(f"dy must have gate's shape {tuple(gate.shape)}, got {tuple(dy.shape)}")
    gate, up, dy = gate.contiguous(), up.contiguous(), dy.contiguous()
    dg, du = torch.empty_like(gate), torch.empty_like(up)
    cfg = config or pick(CONFIGS, gate.device if gate.is_cuda else None)
    n = gate.numel()
    if n:
        _geglu_bwd_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](gate, up, dy, dg, du, n, TANH=approximate == "tanh",
                                                            BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return dg, du


def _geglu_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (gate, up, approximate), (dy,) = args, grads
    if dy is None or not on_kernels(gate):
        return None
    dg, du = geglu_backward_launch(gate, up, dy, approximate)
    return dg if needs[0] else None, du if needs[1] else None, None


@zoo_custom_op("cudal1::geglu", mutates_args=(), ref=geglu_ref, fast_backward=_geglu_backward)
def _geglu_op(gate: torch.Tensor, up: torch.Tensor, approximate: str) -> torch.Tensor:
    return geglu_launch(gate, up, approximate) if gate.is_cuda else geglu_ref(gate, up, approximate).contiguous()


@_geglu_op.register_fake
def _(gate, up, approximate):
    return torch.empty_like(gate, memory_format=torch.contiguous_format)


def geglu(gate: torch.Tensor, up: torch.Tensor, approximate: str = "tanh") -> torch.Tensor:
    """``gelu(gate, approximate) * up`` (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.geglu``."""
    _check(gate, up, approximate)
    return call("geglu", gate, up, approximate)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_geglu_kernel", {"g_ptr": "*bf16", "u_ptr": "*bf16", "y_ptr": "*bf16", "n": "i32"},
                               constexprs={"TANH": True}),
                  TritonKernel("_geglu_bwd_kernel", {"g_ptr": "*bf16", "u_ptr": "*bf16", "dy_ptr": "*bf16",
                                                     "dg_ptr": "*bf16", "du_ptr": "*bf16", "n": "i32"},
                               constexprs={"TANH": True})]
