"""SwiGLU gate: ``y = silu(gate) * up = gate * sigmoid(gate) * up``, elementwise.

Shapes: ``gate`` and ``up`` the same shape (e.g. (tokens, hidden) outputs of two GEMMs); float32, fp32 math;
output like ``gate``. ``swiglu_`` writes the result over ``out`` (the gate GEMM's output): two reads and one
write, against SiLU (read + write) and a product (two reads + write) in eager PyTorch, and one temporary less.

Backward (``swiglu_backward_launch``, CUDA, fp32/bf16/fp16): one kernel reads ``gate``, ``up`` and ``dy`` once and
writes both gradients, ``dgate = dy * up * s * (1 + gate * (1 - s))`` (``s = sigmoid(gate)``) and ``dup = dy *
silu(gate)``; the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._elementwise import CONFIGS

__all__ = ["CONFIGS", "swiglu", "swiglu_", "swiglu_backward_launch", "swiglu_launch", "swiglu_ref"]


def swiglu_ref(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.silu(gate) * up


@triton.jit
def _swiglu_kernel(g_ptr, u_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def swiglu_launch(gate: torch.Tensor, up: torch.Tensor, out: torch.Tensor | None = None,
                  config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; writes ``out`` (new if None; may be ``gate``, which must then be contiguous)."""
    if gate.shape != up.shape:
        raise ValueError(f"gate and up must have the same shape, got {tuple(gate.shape)} and {tuple(up.shape)}")
    if out is None:
        gate = gate.contiguous()
        out = torch.empty_like(gate)
    elif out.shape != gate.shape or not out.is_contiguous() or not gate.is_contiguous():
        raise ValueError("out must be contiguous and have gate's shape (gate contiguous too)")
    up = up.contiguous()
    cfg = config or pick(CONFIGS, gate.device if gate.is_cuda else None)
    n = gate.numel()
    if n:
        _swiglu_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](gate, up, out, n, BLOCK=cfg["BLOCK"],
                                                         num_warps=cfg["num_warps"])
    return out


@triton.jit
def _swiglu_bwd_kernel(g_ptr, u_ptr, dy_ptr, dg_ptr, du_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-g))
    tl.store(dg_ptr + offs, (dy * u * s * (1.0 + g * (1.0 - s))).to(dg_ptr.dtype.element_ty), mask=mask)
    tl.store(du_ptr + offs, (dy * g * s).to(du_ptr.dtype.element_ty), mask=mask)


def swiglu_backward_launch(gate: torch.Tensor, up: torch.Tensor, dy: torch.Tensor,
                           config: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dgate, dup)`` of ``silu(gate) * up`` for the output gradient ``dy`` (all one shape); contiguous, in
    ``gate``'s and ``up``'s dtypes."""
    if not gate.shape == up.shape == dy.shape:
        raise ValueError(f"gate, up and dy must have one shape, got {tuple(gate.shape)}, {tuple(up.shape)}, "
                         f"{tuple(dy.shape)}")
    gate, up, dy = gate.contiguous(), up.contiguous(), dy.contiguous()
    dg, du = torch.empty_like(gate), torch.empty_like(up)
    cfg = config or pick(CONFIGS, gate.device if gate.is_cuda else None)
    n = gate.numel()
    if n:
        _swiglu_bwd_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](gate, up, dy, dg, du, n, BLOCK=cfg["BLOCK"],
                                                             num_warps=cfg["num_warps"])
    return dg, du




def _swiglu_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (gate, up), (dy,) = args, grads
    if dy is None or not on_kernels(gate, up):
        return None
    dg, du = swiglu_backward_launch(gate, up, dy)
    return dg if needs[0] else None, du if needs[1] else None


@zoo_custom_op("cudal1::swiglu", mutates_args=(), ref=swiglu_ref, fast_backward=_swiglu_backward)
def _swiglu_op(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return swiglu_launch(gate, up) if gate.is_cuda else swiglu_ref(gate, up).contiguous()


@_swiglu_op.register_fake
def _(gate, up):
    return torch.empty_like(gate, memory_format=torch.contiguous_format)


@zoo_custom_op("cudal1::swiglu_", mutates_args=("out",), differentiable=False)
def _swiglu_inplace_op(out: torch.Tensor, up: torch.Tensor) -> None:
    if out.is_cuda:
        swiglu_launch(out, up, out=out)
    else:
        out.copy_(swiglu_ref(out, up))


@_swiglu_inplace_op.register_fake
def _(out, up):
    return None


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """``silu(gate) * up`` of float32 tensors of one shape; new contiguous output. Triton on CUDA, the
    reference on CPU; ``torch.ops.cudal1.swiglu``."""
    if gate.shape != up.shape:
        raise ValueError(f"gate and up must have the same shape, got {tuple(gate.shape)} and {tuple(up.shape)}")
    return call("swiglu", gate, up)


def swiglu_(out: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """In place: ``out = silu(out) * up`` (``out`` contiguous float32, e.g. the gate GEMM's output; ``up`` of
    the same shape); returns ``out``. ``torch.ops.cudal1.swiglu_``."""
    if out.shape != up.shape:
        raise ValueError(f"out and up must have the same shape, got {tuple(out.shape)} and {tuple(up.shape)}")
    if not out.is_contiguous():
        raise ValueError("swiglu_ writes in place: out must be contiguous")
    call("swiglu_", out, up)
    return out


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_swiglu_kernel", {"g_ptr": "*fp32", "u_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"}),
                  TritonKernel("_swiglu_bwd_kernel", {"g_ptr": "*bf16", "u_ptr": "*bf16", "dy_ptr": "*bf16",
                                                      "dg_ptr": "*bf16", "du_ptr": "*bf16", "n": "i64"})]
