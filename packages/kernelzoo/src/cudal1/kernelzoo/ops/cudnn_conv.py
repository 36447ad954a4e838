"""Dense convolutions through cuDNN: the zoo's entry point for ``nn.Conv{1,2,3}d`` and
``nn.ConvTranspose{1,2,3}d`` (any groups, stride, padding, dilation, output padding).

Shapes: ``x`` (N, C_in, *spatial) with 1-3 spatial dims; ``weight`` as the matching ``nn.Conv*`` /
``nn.ConvTranspose*`` module stores it; ``bias`` (C_out,) or None; float32 (the cuDNN settings the caller runs
under are left as they are: this module never touches ``torch.backends`` flags).

There is no Triton kernel here, on purpose. These convolutions are compute-bound (2 * C_in * K FLOP per
output element); without TF32 the GPU's only fast path is cuDNN's fp32 implicit GEMM, and a hand-written
Triton implicit-GEMM conv in fp32 has not been shown to beat it. Solutions built on this are therefore at parity
with eager by construction; the zoo's own kernels go into the parts around a convolution (bias,
activation, normalisation, pooling) in the fused tasks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["conv", "conv_transpose"]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _nd(x: torch.Tensor, weight: torch.Tensor) -> int:
    nd = weight.dim() - 2
    if nd not in _CONV or x.dim() not in (nd + 1, nd + 2):
        raise ValueError(f"convolution takes x (N, C, *spatial) with 1-3 spatial dims and a matching weight, "
                         f"got x {tuple(x.shape)} and weight {tuple(weight.shape)}")
    return nd


def conv(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0,
         dilation=1, groups: int = 1) -> torch.Tensor:
    """``torch.nn.functional.conv{1,2,3}d`` (picked from ``weight.dim()``): cuDNN on CUDA."""
    return _CONV[_nd(x, weight)](x, weight, bias, stride, padding, dilation, groups)


def conv_transpose(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0,
                   output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """``torch.nn.functional.conv_transpose{1,2,3}d`` (picked from ``weight.dim()``): cuDNN on CUDA."""
    return _CONV_T[_nd(x, weight)](x, weight, bias, stride, padding, output_padding, groups, dilation)
