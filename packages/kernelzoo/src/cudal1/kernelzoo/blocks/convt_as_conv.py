"""A unit-stride transposed convolution as the forward convolution of the same input with the weight flipped along
every spatial axis and its two channel axes swapped, padded ``d (k - 1) - p`` on each side: the same linear map for
every input and weight (output ``o`` gathers ``x[o + p - k d] w[k]``; with ``k' = K - 1 - k`` that is the forward
convolution's ``x[o + k' d - (d (K - 1) - p)] w'[k']``), in fp32 like the reference (whatever TF32 setting the
caller has for cuDNN convolutions applies to both).

Why: cuDNN runs ``conv_transpose{2,3}d`` (its backward-data kernels) and ``conv{2,3}d`` (forward kernels) with
different algorithms. For KernelBench level 1's stride-1 2-D transposed convolutions of 32 -> 64 channels the
forward ones were faster (``benchmarks/probes/probe_convt_forward.py``, one call timed as the harness times it;
benchmarks/results/2026-11-28-kernelbench-v0-sixteenth-pass-h100.md; figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md) than both eager and the Triton implicit GEMM of
:mod:`.conv_transpose` on 78, 57, 71 and 69; not on 65 (level with eager) nor in 3-D on 68 (slower than Triton back
to back). Per call the flipped weight is formed again (a copy of its 18-31 K values, and cuDNN's own to contiguous):
parameters are read at every call, nothing is cached.

:func:`conv_transpose` takes ``torch.nn.functional.conv_transpose{1,2,3}d``'s arguments and runs the forward
convolution where :func:`applies` (unit stride, no output padding, one group, ``d (k - 1) - p >= 0``: PyTorch's
forward convolution takes no negative padding), the transposed one elsewhere. Any device and dtype: it is PyTorch
either way.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .conv_cuda import _triple

__all__ = ["applies", "conv_transpose", "flipped_weight", "forward_padding"]

_FORWARD = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_TRANSPOSED = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _per_dim(v, nd: int) -> tuple[int, ...]:
    """An int or one value per spatial dimension, as one per dimension (ValueError on a wrong count)."""
    return _triple(v, nd, 0)[3 - nd:]


def forward_padding(kernel: tuple[int, ...], padding, dilation) -> tuple[int, ...]:
    """The forward convolution's padding per spatial dimension, ``d (k - 1) - p`` (negative: it would crop)."""
    nd = len(kernel)
    return tuple(d * (k - 1) - p for k, p, d in zip(kernel, _per_dim(padding, nd), _per_dim(dilation, nd),
                                                       strict=True))


def flipped_weight(weight: torch.Tensor) -> torch.Tensor:
    """The forward convolution's weight (Cout, Cin, *kernel) of a transposed one's (Cin, Cout, *kernel): flipped
    along every spatial axis (a copy), channel axes swapped (a view)."""
    return weight.flip(tuple(range(2, weight.dim()))).transpose(0, 1)


def _forward_args(weight: torch.Tensor, stride, padding, output_padding, groups: int, dilation
                  ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The forward convolution's (padding, dilation) for these transposed-convolution arguments, or None where the
    rewrite does not apply."""
    nd = weight.dim() - 2
    if nd not in _FORWARD or groups != 1 or isinstance(padding, str):
        return None
    if set(_per_dim(stride, nd)) != {1} or set(_per_dim(output_padding, nd)) != {0}:
        return None
    dil = _per_dim(dilation, nd)
    fpad = forward_padding(tuple(weight.shape[2:]), padding, dil)
    return (fpad, dil) if min(fpad) >= 0 else None


def applies(weight: torch.Tensor, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1) -> bool:
    """Whether :func:`conv_transpose` runs the forward convolution for these arguments (``weight``: (Cin, Cout,
    *kernel))."""
    return _forward_args(weight, stride, padding, output_padding, groups, dilation) is not None


def conv_transpose(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                   output_padding=0, groups: int = 1, dilation=1) -> torch.Tensor:
    """``torch.nn.functional.conv_transpose{1,2,3}d(x, weight, bias, stride, padding, output_padding, groups,
    dilation)``, as the forward convolution of the flipped, channel-swapped weight where :func:`applies`.
    x: (N, Cin, *spatial); weight: (Cin, Cout, *kernel); returns (N, Cout, *out), x's dtype."""
    nd = x.dim() - 2
    if nd != weight.dim() - 2 or nd not in _FORWARD:
        raise ValueError(f"x {tuple(x.shape)} and weight {tuple(weight.shape)} are not a 1-3-D transposed "
                         f"convolution's (N, Cin, *spatial) and (Cin, Cout, *kernel)")
    args = _forward_args(weight, stride, padding, output_padding, groups, dilation)
    if args is None:
        return _TRANSPOSED[nd](x, weight, bias, stride, padding, output_padding, groups, dilation)
    return _FORWARD[nd](x, flipped_weight(weight), bias, 1, *args)
