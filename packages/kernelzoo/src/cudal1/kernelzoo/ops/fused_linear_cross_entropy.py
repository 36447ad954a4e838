"""Fused linear + cross-entropy: the loss of ``F.cross_entropy(x @ weight.T + bias, targets)`` without ever
holding the (N, V) logits, for LLM heads whose vocabulary makes the logits the largest tensor of a step.

Shapes: ``x`` (N, H) (flatten (B, S, H) first), ``weight`` (V, H), ``bias`` (V,) or None, ``targets`` (N,)
int64 in [0, V) or ``ignore_index``; fp32, bf16, fp16 or fp64 (all floating inputs one dtype; softmax
statistics in fp32, fp64 for fp64 inputs); output: a 0-d loss in that statistics dtype (``reduction`` ``mean`` over non-ignored rows, or ``sum``). Options as
``F.cross_entropy``: ``ignore_index``, ``label_smoothing`` (eps: the target gets 1 - eps, every class eps / V).

How: the vocabulary is processed in chunks of ``chunk_size`` columns (default: as many as keep one chunk's
logits (N, chunk) no larger than ``x`` itself, N * H elements, so peak memory does not grow with V), in two
passes. Pass 1, per chunk: logits = x @ W_c.T (+ b_c) in the input dtype (cuBLAS, fp32 accumulation), upcast;
a running log-sum-exp per row, the target's logit where it falls in the chunk, the row sum for label
smoothing. Pass 2, only when a gradient is wanted: the chunk's logits again, dlogits = (softmax - (1 - eps) *
onehot - eps / V) * row weight (1 / non-ignored rows for ``mean``; 0 for ignored rows) rounded to the input
dtype (as eager's backward of the logits), then grad_W_c = dlogits.T @ x written once into its rows of
grad_W (no accumulation over chunks), grad_b_c = sum(dlogits), and grad_x += dlogits @ W_c (fp32
accumulator; on CUDA with 16-bit weights and V >= 2N it lives in grad_W's last rows, written last: see
``_accumulator_in_tail``). Four GEMMs of the logits' size against eager's three, all large; the backward only scales the
buffers by the incoming gradient. Registered as ``torch.ops.cudal1.fused_linear_cross_entropy`` (returning the
loss and the three gradient buffers; the public function returns the loss) with its backward through
``torch.library.register_autograd``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._forward_gradients import forward_gradients
from ._index import check_index_range
from ._online_lse import row_lse_parts

__all__ = ["fused_linear_cross_entropy", "fused_linear_cross_entropy_ref"]

_REDUCTIONS = ("mean", "sum")


def fused_linear_cross_entropy_ref(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                                   bias: torch.Tensor | None = None, ignore_index: int = -100,
                                   label_smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """PyTorch reference: the full logits, upcast to fp32, then ``F.cross_entropy``."""
    logits = F.linear(x, weight, bias)
    logits = logits.to(_acc(logits.dtype))
    return F.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing,
                           reduction=reduction)


def _acc(dtype: torch.dtype) -> torch.dtype:
    """The dtype the statistics are computed in: fp32, or fp64 for fp64 inputs (never below the input's)."""
    return torch.promote_types(dtype, torch.float32)


def default_chunk_size(n: int, h: int, v: int) -> int:
    """Vocabulary columns per chunk: one chunk's logits (N x chunk) at most N x H elements (the size of ``x``):
    ``H`` columns (at most V, at least 1)."""
    return max(1, min(v, h))


def _check(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
           ignore_index: int, label_smoothing: float, reduction: str) -> None:
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[1]:
        raise ValueError(f"x must be (N, H) and weight (V, H): got {tuple(x.shape)} and {tuple(weight.shape)} "
                         "(flatten (B, S, H) inputs with x.flatten(0, -2) and targets.flatten())")
    if targets.shape != (x.shape[0],):
        raise ValueError(f"targets must be ({x.shape[0]},) to match x's rows, got {tuple(targets.shape)}")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"bias must be ({weight.shape[0]},), got {tuple(bias.shape)}")
    dtypes = {t.dtype for t in (x, weight, bias) if t is not None}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise TypeError(f"x, weight and bias must share one floating dtype, got {sorted(map(str, dtypes))}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r} (per-row losses: use "
                         "cross_entropy_loss on the logits; the fused form accumulates gradients over rows)")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must lie in [0, 1], got {label_smoothing}")
    check_index_range("fused_linear_cross_entropy", "targets", targets, weight.shape[0], ignore_index)


# gradients computed in the forward, handed to autograd without a copy (see _forward_gradients)
_setup, _backward = forward_gradients("fused_linear_cross_entropy", lambda *a: _flce_impl(*a), grad_of=(0, 1, 3))


@triton.jit
def _flce_stats_kernel(z_ptr, t_ptr, m_ptr, s_ptr, zt_ptr, zs_ptr, n_cols, c0, ignore_index, SMOOTH: tl.constexpr,
                       BLOCK: tl.constexpr):
    """Pass 1 on one chunk's logits (N, C): fold the row's max and sum of exp into the running ones, pick the
    target's logit where it falls in the chunk, add the row sum (label smoothing)."""
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    m, s_c, zs = row_lse_parts(z_ptr, base, n_cols, SMOOTH, BLOCK)
    m_run = tl.load(m_ptr + row)
    s_run = tl.load(s_ptr + row)
    m_new = tl.maximum(m_run, m)
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    tl.store(s_ptr + row, s_run * tl.exp(m_run - m_safe) + s_c * tl.exp(m - m_safe))
    tl.store(m_ptr + row, m_new)
    t = tl.load(t_ptr + row).to(tl.int64)
    inside = (t != ignore_index) & (t >= c0) & (t < c0 + n_cols)
    if inside:
        tl.store(zt_ptr + row, tl.load(z_ptr + base + (t - c0)).to(tl.float32))
    if SMOOTH:
        tl.store(zs_ptr + row, tl.load(zs_ptr + row) + zs)


@triton.jit
def _flce_grad_kernel(z_ptr, t_ptr, lse_ptr, w_ptr, n_cols, c0, one_m_eps, eps_over_v, BLOCK: tl.constexpr):
    """Pass 2 on one chunk's logits (N, C), in place: ``z <- w_row * (softmax - (1 - eps) * onehot - eps / V)``."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    z = tl.load(z_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    lse = tl.load(lse_ptr + row)
    w = tl.load(w_ptr + row)
    t = tl.load(t_ptr + row).to(tl.int64)
    d = tl.exp(z - lse) - tl.where(cols + c0 == t, one_m_eps, 0.0) - eps_over_v
    tl.store(z_ptr + offs, (w * d).to(z_ptr.dtype.element_ty), mask=mask)


_BLOCK = 2048


def _flce_triton(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
                 ignore_index: int, label_smoothing: float, reduction: str, chunk_size: int, with_grad: bool,
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The CUDA path: the same two passes, each chunk's logits kept in the input dtype (as eager's) and reduced by
    the two kernels above (no fp32 copy of a chunk)."""
    n, v = x.shape[0], weight.shape[0]
    f32 = torch.float32
    valid = targets != ignore_index
    scale = 1.0 / valid.sum().to(f32) if reduction == "mean" else torch.ones((), dtype=f32, device=x.device)
    eps = float(label_smoothing)
    chunks = _chunks(0, v, chunk_size)
    tc = targets.contiguous()
    m = torch.full((n,), -math.inf, dtype=f32, device=x.device)
    s, z_t, z_sum = (torch.zeros(n, dtype=f32, device=x.device) for _ in range(3))
    for c0, c1 in chunks:
        z = F.linear(x, weight[c0:c1], None if bias is None else bias[c0:c1])
        _flce_stats_kernel[(n,)](z, tc, m, s, z_t, z_sum, c1 - c0, c0, ignore_index, SMOOTH=bool(eps),
                                 BLOCK=min(_BLOCK, triton.next_power_of_2(c1 - c0)), num_warps=8)
        del z
    lse = m + torch.log(s)
    row = (1.0 - eps) * (lse - z_t)
    if eps:
        row = row + eps * (lse - z_sum / v)
    loss = torch.where(valid, row, torch.zeros_like(row)).sum() * scale
    if not with_grad:
        return loss, x.new_empty(0), x.new_empty(0), x.new_empty(0)
    gw = torch.empty_like(weight)
    gb = torch.empty(v, dtype=f32, device=x.device) if bias is not None else x.new_empty(0)
    w_row = (valid.to(f32) * scale).contiguous()
    t0, gx = _accumulator_in_tail(gw, n)
    gx.zero_()

    def chunk_gradients(c0: int, c1: int, *, weights: bool, inputs: bool) -> None:
        d = F.linear(x, weight[c0:c1], None if bias is None else bias[c0:c1])
        block = min(_BLOCK, triton.next_power_of_2(c1 - c0))
        _flce_grad_kernel[(n, triton.cdiv(c1 - c0, block))](d, tc, lse, w_row, c1 - c0, c0, 1.0 - eps, eps / v,
                                                            BLOCK=block, num_warps=8)
        if weights:
            if bias is not None:
                gb[c0:c1] = d.sum(0, dtype=f32)
            torch.mm(d.t(), x, out=gw[c0:c1])
        if inputs:
            _add_matmul(gx, d, weight[c0:c1])

    for c0, c1 in _chunks(0, t0, chunk_size):
        chunk_gradients(c0, c1, weights=True, inputs=True)
    tail = _chunks(t0, v, chunk_size)
    for c0, c1 in tail:  # grad_x's last terms, while its fp32 sum still occupies grad_W's tail rows
        chunk_gradients(c0, c1, weights=False, inputs=True)
    gx = gx.to(x.dtype)
    # the tail rows of grad_W, their logits recomputed in half-size chunks: the rounded grad_x is alive beside
    # them now, so this keeps the peak near the main loop's (measured on the H100: 1130 MB with full chunks,
    # Liger's 1129, at 4096 tokens x 4096 hidden x 128256 vocabulary)
    for c0, c1 in (_chunks(t0, v, max(1, chunk_size // 2)) if t0 < v else ()):
        chunk_gradients(c0, c1, weights=True, inputs=False)
    return loss, gx, gw, gb


def _chunks(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    return [(c, min(c + size, stop)) for c in range(start, stop, size)]


def _accumulator_in_tail(gw: torch.Tensor, n: int) -> tuple[int, torch.Tensor]:
    """``(t0, acc)``: the fp32 (N, H) accumulator of grad_x, and the first row of ``gw`` (V, H) it occupies.

    For 16-bit weights with V >= 2N (an LLM head: vocabulary 128k, a few thousand tokens) the accumulator is
    grad_W's last rows, viewed as fp32: those rows are written last (``_flce_triton`` finishes grad_x, rounds it
    to the input dtype, then recomputes the tail chunks' logits to write them), so the fp32 sum costs no memory
    of its own (N x H x 4 bytes: 64 MB at 4096 tokens x 4096 hidden) at the price of recomputing 2N rows of
    logits. Elsewhere: a separate fp32 tensor and ``t0 = V`` (no tail)."""
    v, h = gw.shape
    if gw.element_size() == 2 and gw.is_contiguous():
        t0 = v - 2 * n
        t0 -= (t0 * h) % 2  # the fp32 view must start at a 4-byte boundary
        if t0 >= 0 and n * h:
            return t0, gw[t0:].reshape(-1)[: 2 * n * h].view(torch.float32).view(n, h)
    return v, torch.empty((n, h), dtype=torch.float32, device=gw.device)


_ADDMM_OUT_DTYPE: list[bool] = []  # whether torch.addmm takes out_dtype here (probed on first use)


def _add_matmul(acc: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """``acc += a @ b`` for fp32 ``acc`` and 16-bit ``a``, ``b``: one GEMM with fp32 output accumulating into
    ``acc`` (``torch.addmm(..., out_dtype=)``, CUDA) where torch has it, no (N, H) 16-bit temporary; else
    ``acc += a @ b``."""
    if a.dtype != acc.dtype and acc.is_cuda and _ADDMM_OUT_DTYPE != [False]:
        try:
            torch.addmm(acc, a, b, out_dtype=acc.dtype, out=acc)
            _ADDMM_OUT_DTYPE[:] = [True]
            return
        except (TypeError, RuntimeError):
            if _ADDMM_OUT_DTYPE == [True]:
                raise
            _ADDMM_OUT_DTYPE[:] = [False]
    acc += a @ b


@zoo_custom_op("cudal1::fused_linear_cross_entropy", mutates_args=(), backward=_backward, setup_context=_setup,
               fp64_native=True)
def _flce_op(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
             ignore_index: int, label_smoothing: float, reduction: str, chunk_size: int, with_grad: bool,
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return _flce_impl(x, weight, targets, bias, ignore_index, label_smoothing, reduction, chunk_size, with_grad)


def _flce_impl(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, bias: torch.Tensor | None,
               ignore_index: int, label_smoothing: float, reduction: str, chunk_size: int, with_grad: bool,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The loss and (with_grad) the gradient buffers: see the module docstring."""
    if on_kernels(x):
        return _flce_triton(x, weight, targets, bias, ignore_index, label_smoothing, reduction, chunk_size,
                            with_grad)
    n, v = x.shape[0], weight.shape[0]
    acc = _acc(x.dtype)
    valid = targets != ignore_index
    count = int(valid.sum()) if reduction == "mean" else 1
    scale = 1.0 / count if count else math.nan
    eps = float(label_smoothing)
    chunks = [(c, min(c + chunk_size, v)) for c in range(0, v, chunk_size)]

    def logits(c0: int, c1: int) -> torch.Tensor:
        return F.linear(x, weight[c0:c1], None if bias is None else bias[c0:c1]).to(acc)

    lse = torch.full((n,), -math.inf, dtype=acc, device=x.device)
    z_t = torch.zeros(n, dtype=acc, device=x.device)
    z_sum = torch.zeros(n, dtype=acc, device=x.device) if eps else None
    for c0, c1 in chunks:  # pass 1: statistics
        z = logits(c0, c1)
        lse = torch.logaddexp(lse, torch.logsumexp(z, dim=-1))
        inside = valid & (targets >= c0) & (targets < c1)
        local = torch.where(inside, targets - c0, torch.zeros_like(targets))
        z_t += torch.where(inside, z.gather(1, local[:, None]).squeeze(1), torch.zeros_like(z_t))
        if z_sum is not None:
            z_sum += z.sum(dim=-1)
        del z
    row = (1.0 - eps) * (lse - z_t)
    if z_sum is not None:
        row = row + eps * (lse - z_sum / v)
    loss = torch.where(valid, row, torch.zeros_like(row)).sum() * scale
    if not with_grad:
        return loss, x.new_empty(0), x.new_empty(0), x.new_empty(0)
    gx = torch.zeros(x.shape, dtype=acc, device=x.device)
    gw = torch.empty_like(weight)
    gb = torch.empty(v, dtype=acc, device=x.device) if bias is not None else x.new_empty(0)
    weight_row = (valid.to(acc) * scale)[:, None]
    for c0, c1 in chunks:  # pass 2: gradients
        d = logits(c0, c1).sub_(lse[:, None]).exp_()  # softmax, in place of the chunk's logits
        inside = valid & (targets >= c0) & (targets < c1)
        local = torch.where(inside, targets - c0, torch.zeros_like(targets))
        d.scatter_add_(1, local[:, None], (inside.to(acc) * -(1.0 - eps))[:, None])
        if eps:
            d.sub_(eps / v)
        d.mul_(weight_row)
        if bias is not None:
            gb[c0:c1] = d.sum(0)
        dl = d.to(x.dtype)
        del d
        torch.mm(dl.t(), x, out=gw[c0:c1])
        gx += dl @ weight[c0:c1]
    return loss, gx.to(x.dtype), gw, gb


@_flce_op.register_fake
def _(x, weight, targets, bias, ignore_index, label_smoothing, reduction, chunk_size, with_grad):
    acc = _acc(x.dtype)
    loss = x.new_empty((), dtype=acc)
    gx = torch.empty_like(x) if with_grad else x.new_empty(0)
    gw = torch.empty_like(weight) if with_grad else x.new_empty(0)
    gb = x.new_empty(weight.shape[0], dtype=acc) if with_grad and bias is not None else x.new_empty(0)
    return loss, gx, gw, gb


def fused_linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                               bias: torch.Tensor | None = None, *, ignore_index: int = -100,
                               label_smoothing: float = 0.0, reduction: str = "mean",
                               chunk_size: int | None = None) -> torch.Tensor:
    """Cross-entropy of ``x @ weight.T + bias`` against ``targets`` without materialising the logits (see the
    module docstring for shapes, dtypes and options); ``torch.ops.cudal1.fused_linear_cross_entropy``."""
    _check(x, weight, targets, bias, ignore_index, label_smoothing, reduction)
    cols = chunk_size if chunk_size is not None else default_chunk_size(x.shape[0], x.shape[1], weight.shape[0])
    if cols < 1:
        raise ValueError(f"chunk_size (vocabulary columns per chunk) must be >= 1, got {cols}")
    with_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias))
    return call("fused_linear_cross_entropy", x, weight, targets, bias, int(ignore_index), float(label_smoothing),
                reduction, int(cols), with_grad)[0]


#: for ``python -m cudal1.kernelzoo.compile_targets``
CONFIGS = {family: {"num_warps": 8} for family in ("sm80", "sm86", "sm89", "sm90")}
TRITON_KERNELS = [
    TritonKernel("_flce_stats_kernel", {"z_ptr": "*bf16", "t_ptr": "*i64", "m_ptr": "*fp32", "s_ptr": "*fp32",
                                        "zt_ptr": "*fp32", "zs_ptr": "*fp32", "n_cols": "i32", "c0": "i32",
                                        "ignore_index": "i32"}, constexprs={"SMOOTH": False, "BLOCK": _BLOCK}),
    TritonKernel("_flce_grad_kernel", {"z_ptr": "*bf16", "t_ptr": "*i64", "lse_ptr": "*fp32", "w_ptr": "*fp32",
                                       "n_cols": "i32", "c0": "i32", "one_m_eps": "fp32", "eps_over_v": "fp32"},
                 constexprs={"BLOCK": _BLOCK}),
]
