"""Adaptive layer norm modulation (DiT's adaLN): a layer norm without affine parameters, then a
per-sample scale and shift::

    y[b, s] = layer_norm(x[b, s], eps) * (1 + scale[b]) + shift[b]

Shapes: ``x`` (B, S, N); ``scale``, ``shift`` (B, N); float32, statistics in fp32; output (B, S, N).
Memory traffic: one read of ``x``, one write (``scale``/``shift`` rows stay in cache), against a layer norm
plus three broadcast elementwise passes in eager PyTorch.

Backward (CUDA, fp32/bf16/fp16, rows up to the kernel's MAX_N): the shared row-norm backward kernel
(``_norm_backward``) with per-sample affine parameters ``1 + scale[b]``, ``shift[b]`` (one program group per
sample on grid axis 1): ``dx`` once, ``dscale[b]`` and ``dshift[b]`` as per-program column sums of ``dy * xhat``
and ``dy`` over the sample's rows. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._fused_norm import (
    BASE_CONSTEXPRS,
    CONFIGS,
    SIGNATURE,
    _fused_norm_kernel,  # noqa: F401  (named in TRITON_KERNELS)
    fused_norm_launch,
)
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import MAX_GROUPS, backward_kernel, fused_norm_backward_launch, takes

__all__ = ["CONFIGS", "layer_norm_modulate", "layer_norm_modulate_launch", "layer_norm_modulate_ref"]


def layer_norm_modulate_ref(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch reference."""
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), None, None, eps)
    return y * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def _check(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> None:
    if x.dim() != 3:
        raise ValueError(f"x must be (B, S, N), got shape {tuple(x.shape)}")
    want = (x.shape[0], x.shape[2])
    if shift.shape != want or scale.shape != want:
        raise ValueError(f"shift and scale must have shape {want}, got {tuple(shift.shape)} and {tuple(scale.shape)}")


def layer_norm_modulate_launch(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6,
                               config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (B, S, N) with ``shift``, ``scale`` (B, N); returns a new tensor."""
    _check(x, shift, scale)
    x = x.contiguous()
    out = torch.empty_like(x)
    b, s, _ = x.shape
    return fused_norm_launch(x, out, b * s, scale=scale.contiguous(), shift=shift.contiguous(), mod_group=max(s, 1),
                             eps=eps, config=config)


def _layer_norm_modulate_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, shift, scale, eps), (dy,) = args, grads
    if dy is None or x.numel() == 0 or x.shape[0] > MAX_GROUPS or not takes(x, None, shift, scale):
        return None
    b, s, _ = x.shape
    dx, dscale, dshift, _ = fused_norm_backward_launch(x, dy, b * s, eps, scale=scale, shift=shift, mod_group=s)
    return dx if needs[0] else None, dshift if needs[1] else None, dscale if needs[2] else None, None


@zoo_custom_op("cudal1::layer_norm_modulate", mutates_args=(), ref=layer_norm_modulate_ref,
               fast_backward=_layer_norm_modulate_backward)
def _layer_norm_modulate_op(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float) -> torch.Tensor:
    if x.is_cuda:
        return layer_norm_modulate_launch(x, shift, scale, eps)
    return layer_norm_modulate_ref(x, shift, scale, eps).contiguous()


@_layer_norm_modulate_op.register_fake
def _(x, shift, scale, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def layer_norm_modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``layer_norm(x, eps) * (1 + scale[:, None]) + shift[:, None]`` for float32 ``x`` (B, S, N) and
    ``shift``, ``scale`` (B, N); output (B, S, N). Triton on CUDA, the reference on CPU;
    ``torch.ops.cudal1.layer_norm_modulate``."""
    _check(x, shift, scale)
    return call("layer_norm_modulate", x, shift, scale, eps)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_fused_norm_kernel", SIGNATURE,
                               constexprs=dict(BASE_CONSTEXPRS, HAS_W=False, HAS_B=False, HAS_MOD=True)),
                  backward_kernel(rms=False, bias=True, mod=True)]
