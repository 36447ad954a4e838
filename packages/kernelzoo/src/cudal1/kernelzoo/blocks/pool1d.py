"""1-D max and average pooling in one Triton launch each, launched through
:class:`~cudal1.kernelzoo.fast_launch.FastLaunch`: :func:`max_pool1d` and :func:`avg_pool1d`. Used by KernelBench
level 1's ``kernelbench_v0/pending`` solutions 41 (``nn.MaxPool1d``) and 44 (``nn.AvgPool1d``).

Why: at those tasks' sizes (x (16, 64, 128) and (16, 32, 128) fp32: 0.5 and 0.25 MB) a call is host time. On CUDA,
eager's ``F.max_pool1d`` is ``max_pool1d_with_indices`` -> ``unsqueeze`` -> ``max_pool2d_with_indices`` (which
allocates and writes the indices as well as the values) -> ``squeeze``, and ``F.avg_pool1d`` is ``unsqueeze`` ->
``avg_pool2d`` -> ``squeeze``; here the host path is one ``torch.empty`` and one launch through the compiled
kernel's launcher. Not yet measured on a GPU.

The kernel, fp32, every geometry value a compile-time constant: x viewed as (N * C) rows of L; one program per
tile of BR rows x BL output positions (:func:`pool_tile`; a 1-D grid, row-major); the K taps unrolled, tap k of
output j reading input ``j * stride - padding + k * dilation`` (a masked load: the tap is padding outside
``[0, L)``). Max: padding taps are ``-inf`` and a NaN anywhere in the window makes the output NaN
(``tl.maximum(..., propagate_nan=ALL)``, as PyTorch's max pooling). Average: the in-range taps summed in tap order
(PyTorch's order), then an IEEE division by K (``count_include_pad=True``; with ``ceil_mode=False`` a window never
passes the padded input, so PyTorch's divisor is K too) or by the number of in-range taps.

Shapes and dtypes: x (N, C, L) float32 CUDA, contiguous (made so); returns (N, C, OL) float32 with OL as
``torch.nn.functional`` computes it: ``(L + 2p - d (K - 1) - 1) // s + 1`` (max), ``(L + 2p - K) // s + 1``
(average). Anything else (CPU tensors, other dtypes, unbatched (C, L) input, ``ceil_mode=True``, geometry PyTorch
refuses, 2**31 elements or more) calls ``torch.nn.functional``, which raises where PyTorch does; under
``TRITON_INTERPRET=1`` the kernels run in Triton's interpreter on CPU tensors (the tests).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._triton import tl, triton
from ..fast_launch import FastLaunch
from .small_conv import interpreted

__all__ = ["avg_pool1d", "max_pool1d", "pool_tile"]

#: output values a program computes (BR x BL): 4 a thread at 2 warps
POOL_TILE = 256


@triton.jit
def _pool1d_kernel(x_ptr, y_ptr, ROWS, L, OL, NJ,
                   K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
                   IS_MAX: tl.constexpr, COUNT_PAD: tl.constexpr, BR: tl.constexpr, BL: tl.constexpr):
    pid = tl.program_id(0)
    r = (pid // NJ) * BR + tl.arange(0, BR)
    j = (pid % NJ) * BL + tl.arange(0, BL)
    rm = r < ROWS
    xr = x_ptr + r[:, None] * L
    if IS_MAX:
        acc = tl.full([BR, BL], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BR, BL], tl.float32)
        cnt = tl.zeros([BL], tl.float32)
    for k in tl.static_range(K):
        i = j * STRIDE - PAD + k * DIL
        ok = (i >= 0) & (i < L)
        m = rm[:, None] & ok[None, :]
        if IS_MAX:
            v = tl.load(xr + i[None, :], mask=m, other=float("-inf"))
            acc = tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)
        else:
            acc += tl.load(xr + i[None, :], mask=m, other=0.0)
            cnt += ok.to(tl.float32)
    if not IS_MAX:  # IEEE division (``/`` is approximate in Triton), as PyTorch's ``sum / divide_factor``
        if COUNT_PAD:
            acc = tl.math.div_rn(acc, tl.full([BR, BL], K, tl.float32))
        else:  # (a count of 0 only past the last output: not stored)
            acc = tl.math.div_rn(acc, tl.broadcast_to(tl.maximum(cnt, 1.0)[None, :], [BR, BL]))
    tl.store(y_ptr + r[:, None] * OL + j[None, :], acc, mask=rm[:, None] & (j < OL)[None, :])


def _pow2(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def pool_tile(rows: int, out_len: int) -> tuple[int, int, int]:
    """(BR, BL, num_warps) for ``rows`` = N * C rows of ``out_len`` outputs: BL the outputs' power of two up to 128,
    BR filling :data:`POOL_TILE` values but no more than the rows, 2 warps. At KernelBench's sizes: 41 (1024 rows of
    62 outputs) 4 x 64, 256 programs; 44 (512 rows of 64) 4 x 64, 128 programs. Not yet tuned on a GPU."""
    bl = min(128, _pow2(out_len))
    return min(max(1, POOL_TILE // bl), _pow2(rows)), bl, 2


_HANDLES: dict[tuple, FastLaunch] = {}


def _handle(**constexprs) -> FastLaunch:
    key = tuple(constexprs.items())
    h = _HANDLES.get(key)
    if h is None:
        h = _HANDLES[key] = FastLaunch(_pool1d_kernel, **constexprs)
    return h


def _single(v, default: int | None = None) -> int | None:
    """An int from an int or a one-element sequence (PyTorch's 1-D pooling arguments); ``default`` for None or an
    empty sequence (a stride of ``kernel_size``); None for anything else (the call goes to PyTorch)."""
    if v is None:
        return default
    if isinstance(v, int):
        return v
    try:
        v = tuple(v)
    except TypeError:
        return None
    if not v:
        return default
    return v[0] if len(v) == 1 and isinstance(v[0], int) else None


def _out_len(x: torch.Tensor, span: int | None, s: int | None, p: int | None) -> int | None:
    """Output length for windows of ``span`` inputs (``dilation (K - 1) + 1``), or None where the kernel does not
    apply: x not (N, C, L), 2**31 elements or more (the kernel's offsets are int32), a stride below 1, no output.
    The caller checks the rest of PyTorch's conditions, and x's dtype and device (per call)."""
    if not (x.dim() == 3 and x.numel() < 2**31 and None not in (span, s, p) and s >= 1):
        return None
    out_len = (x.shape[2] + 2 * p - span) // s + 1
    return out_len if out_len >= 1 else None


#: (x.shape, geometry, tile) -> (handle, grid, output shape, trailing launch arguments), or None where the kernel
#: does not apply (PyTorch runs the call): a call with a shape seen before does one dict lookup, one ``new_empty`` and
#: one launch on the host
_PLANS: dict[tuple, tuple[FastLaunch, tuple[int], tuple[int, int, int], tuple[int, ...]] | None] = {}


def _kernel_path(x: torch.Tensor) -> bool:
    return x.dtype == torch.float32 and (x.is_cuda or (x.device.type == "cpu" and interpreted()))


def _plan(x: torch.Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool, is_max: bool, count_pad: bool,
          tile: tuple[int, int, int] | None):
    """The launch of this geometry on x's shape, or None (PyTorch's conditions are checked here once per shape)."""
    k, p, d = _single(kernel_size), _single(padding), _single(dilation)
    s = _single(stride, k)
    if None in (k, p, d) or not (k >= 1 and d >= 1 and 0 <= p <= k // 2) or ceil_mode:
        return None
    out_len = _out_len(x, d * (k - 1) + 1, s, p)
    if out_len is None or x.shape[0] * x.shape[1] == 0:
        return None
    n, c, length = x.shape
    rows = n * c
    br, bl, num_warps = pool_tile(rows, out_len) if tile is None else tile
    handle = _handle(K=k, STRIDE=s, PAD=p, DIL=d, IS_MAX=is_max, COUNT_PAD=count_pad, BR=br, BL=bl,
                     num_warps=num_warps)
    nj = -(-out_len // bl)
    return handle, (-(-rows // br) * nj,), (n, c, out_len), (rows, length, out_len, nj)


def _pool(x: torch.Tensor, key: tuple, args: tuple) -> torch.Tensor | None:
    """Run the planned launch for ``key`` (made from ``args`` the first time), or None where PyTorch runs."""
    if not _kernel_path(x):
        return None
    try:
        plan = _PLANS[key]
    except KeyError:
        plan = _PLANS[key] = _plan(x, *args)
    except TypeError:  # an unhashable argument (a list): plan it without keeping the plan
        plan = _plan(x, *args)
    if plan is None:
        return None
    handle, grid, out_shape, tail = plan
    y = x.new_empty(out_shape)
    handle(grid, x.contiguous(), y, *tail)
    return y


def max_pool1d(x: torch.Tensor, kernel_size, stride=None, padding=0, dilation=1, *, ceil_mode: bool = False,
               tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``F.max_pool1d`` values (no indices). x (N, C, L) fp32; returns (N, C, (L + 2 padding - dilation (K - 1) - 1)
    // stride + 1) fp32; NaN in a window gives NaN. ``stride`` None means ``kernel_size``. ``tile`` (BR, BL,
    num_warps) overrides :func:`pool_tile`'s choice (tuning)."""
    args = (kernel_size, stride, padding, dilation, ceil_mode, True, False, tile)
    y = _pool(x, (x.shape, *args), args)
    return F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode) if y is None else y


def avg_pool1d(x: torch.Tensor, kernel_size, stride=None, padding=0, count_include_pad: bool = True, *,
               ceil_mode: bool = False, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``F.avg_pool1d``. x (N, C, L) fp32; returns (N, C, (L + 2 padding - K) // stride + 1) fp32, each output the
    sum of its window's in-range inputs divided by K (``count_include_pad``) or by their count. ``stride`` None
    means ``kernel_size``. ``tile`` (BR, BL, num_warps) overrides :func:`pool_tile`'s choice (tuning)."""
    args = (kernel_size, stride, padding, 1, ceil_mode, False, bool(count_include_pad), tile)
    y = _pool(x, (x.shape, *args), args)
    return F.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad) if y is None else y
