"""Rotary position embedding applied to queries and keys together, in the transformers convention
(``apply_rotary_pos_emb(q, k, cos, sin)`` of Llama, Qwen2, Mistral)::

    q' = q * cos + rotate_half(q) * sin,   k' = k * cos + rotate_half(k) * sin
    rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2])

Shapes: ``q`` (B, Hq, S, D), ``k`` (B, Hk, S, D) with D even (any strides with a contiguous last dimension,
e.g. the transposed views attention code makes); ``cos``, ``sin`` either (B or 1, S, D) as a rotary-embedding
module returns them for given positions, or, with ``position_ids`` (B, S) int64, whole (P, D) tables indexed by
position. fp32, bf16, fp16 (fp32 math, one rounding at the store; fp64 runs the reference). Outputs
``(q', k')`` (B, H, S, D) in the inputs' dtype and layout (the transposed view of a (B, S, H, D) projection
stays such a view; an input whose last dimension is strided gives a contiguous output).

One program per (b, s) position: its cos/sin row is read once and applied to every head of q and of k, a
(heads, D/2) tile at a time (one read and one write of q and k; the unfused form makes four temporaries per tensor). Gradients: the reference's
vector-Jacobian product (cudal1.kernelzoo.registry): for q and k a rotation by -sin; also for cos and sin.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op

__all__ = ["CONFIGS", "rope_qk", "rope_qk_launch", "rope_qk_ref"]

#: num_warps per program (one program per position; BLOCK = D / 2 rounded up to a power of two); TILE: elements
#: of a (heads, BLOCK) step, so BLOCK_H = TILE / BLOCK heads are rotated at once
CONFIGS = {
    "sm80": {"num_warps": 4, "TILE": 2048},
    "sm86": {"num_warps": 4, "TILE": 2048},
    "sm89": {"num_warps": 4, "TILE": 2048},
    "sm90": {"num_warps": 4, "TILE": 2048},
}
check_table(CONFIGS, "rope_qk")


def _rows(cos: torch.Tensor, sin: torch.Tensor, position_ids: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin as (B or 1, S, D): gathered by ``position_ids`` from (P, D) tables, or as given."""
    if position_ids is None:
        return cos, sin
    return cos[position_ids], sin[position_ids]


def rope_qk_ref(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                position_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """PyTorch reference (transformers' ``apply_rotary_pos_emb``, heads on dimension 1)."""
    c, s = _rows(cos, sin, position_ids)
    c, s = c.unsqueeze(1), s.unsqueeze(1)

    def rotate_half(x: torch.Tensor) -> torch.Tensor:
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s


@triton.jit
def _rotate_heads(src, dst, n_heads, s_h, o_h, half, cols, cmask, c1, c2, s1, s2, BLOCK_H: tl.constexpr):
    """Every head of one position, BLOCK_H heads per step: ``dst[:h] = x1 * c1 - x2 * s1``,
    ``dst[h:] = x2 * c2 + x1 * s2`` (fp32 math; ``s_h``, ``o_h`` the head strides of source and output)."""
    for h0 in range(0, n_heads, BLOCK_H):
        hs = h0 + tl.arange(0, BLOCK_H)
        m = (hs < n_heads)[:, None] & cmask[None, :]
        ps = src + hs[:, None] * s_h + cols[None, :]
        x1 = tl.load(ps, mask=m, other=0.0).to(tl.float32)
        x2 = tl.load(ps + half, mask=m, other=0.0).to(tl.float32)
        pd = dst + hs[:, None] * o_h + cols[None, :]
        tl.store(pd, (x1 * c1[None, :] - x2 * s1[None, :]).to(dst.dtype.element_ty), mask=m)
        tl.store(pd + half, (x2 * c2[None, :] + x1 * s2[None, :]).to(dst.dtype.element_ty), mask=m)


@triton.jit
def _rope_qk_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, pos_ptr, qo_ptr, ko_ptr, S, HQ, HK, half,
                    q_sb, q_sh, q_ss, k_sb, k_sh, k_ss, qo_sb, qo_sh, qo_ss, ko_sb, ko_sh, ko_ss, cs_sb, cs_ss,
                    HAS_POS: tl.constexpr, BLOCK: tl.constexpr, BLOCK_H: tl.constexpr,
                    BACKWARD: tl.constexpr = False):
    pid = tl.program_id(0).to(tl.int64)
    b = pid // S
    s = pid % S
    if HAS_POS:
        row = tl.load(pos_ptr + pid).to(tl.int64)
        cs = row * cs_ss
    else:
        cs = b * cs_sb + s * cs_ss
    cols = tl.arange(0, BLOCK)
    mask = cols < half
    c1 = tl.load(cos_ptr + cs + cols, mask=mask, other=0.0).to(tl.float32)
    c2 = tl.load(cos_ptr + cs + half + cols, mask=mask, other=0.0).to(tl.float32)
    s1 = tl.load(sin_ptr + cs + cols, mask=mask, other=0.0).to(tl.float32)
    s2 = tl.load(sin_ptr + cs + half + cols, mask=mask, other=0.0).to(tl.float32)
    if BACKWARD:  # the transposed rotation
        s1, s2 = -s2, -s1
    _rotate_heads(q_ptr + b * q_sb + s * q_ss, qo_ptr + b * qo_sb + s * qo_ss, HQ, q_sh, qo_sh, half, cols, mask,
                  c1, c2, s1, s2, BLOCK_H)
    _rotate_heads(k_ptr + b * k_sb + s * k_ss, ko_ptr + b * ko_sb + s * ko_ss, HK, k_sh, ko_sh, half, cols, mask,
                  c1, c2, s1, s2, BLOCK_H)


def _out_like(t: torch.Tensor) -> torch.Tensor:
    """The output of ``t``'s rotation: ``t``'s own layout where its last dimension is contiguous (the (B, H, S,
    D) view of a (B, S, H, D) projection stays that view: coalesced reads and writes), else contiguous."""
    return torch.empty_like(t if t.stride(-1) == 1 else t.contiguous())


def _check(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
           position_ids: torch.Tensor | None) -> None:
    if q.dim() != 4 or k.dim() != 4 or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(f"q and k must be (B, H, S, D) with the same B, S, D: got {tuple(q.shape)} and "
                         f"{tuple(k.shape)}")
    b, _, s, d = q.shape
    if d % 2:
        raise ValueError(f"the head dimension must be even for rotate-half RoPE, got {d}")
    if cos.shape != sin.shape:
        raise ValueError(f"cos and sin must have one shape, got {tuple(cos.shape)} and {tuple(sin.shape)}")
    if position_ids is None:
        if cos.dim() != 3 or cos.shape[0] not in (1, b) or cos.shape[1:] != (s, d):
            raise ValueError(f"cos/sin must be ({b} or 1, {s}, {d}), got {tuple(cos.shape)} (whole (P, D) tables "
                             "need position_ids)")
    else:
        if position_ids.shape != (b, s) or position_ids.is_floating_point():
            raise ValueError(f"position_ids must be an integer ({b}, {s}) tensor, got {position_ids.dtype} "
                             f"{tuple(position_ids.shape)}")
        if cos.dim() != 2 or cos.shape[1] != d:
            raise ValueError(f"with position_ids, cos/sin must be (P, {d}) tables, got {tuple(cos.shape)}")
        if position_ids.numel() and (int(position_ids.min()) < 0 or int(position_ids.max()) >= cos.shape[0]):
            raise ValueError(f"position_ids must lie in [0, {cos.shape[0]}) (the tables' rows), got "
                             f"[{int(position_ids.min())}, {int(position_ids.max())}]")


def rope_qk_launch(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                   position_ids: torch.Tensor | None = None, config: dict | None = None, backward: bool = False,
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the Triton kernel (see the module docstring for shapes). ``backward=True``: ``q``, ``k`` are the
    output gradients and the result the gradients of the inputs q and k (the transposed rotation; the inputs
    were checked by the forward, so no check and no device sync here)."""
    if not backward:
        _check(q, k, cos, sin, position_ids)
    cfg = config or pick(CONFIGS, q.device if q.is_cuda else None)
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    cos, sin = cos.contiguous(), sin.contiguous()
    b, hq, s, d = q.shape
    qo, ko = _out_like(q), _out_like(k)
    if q.numel() == 0 and k.numel() == 0:
        return qo, ko
    has_pos = position_ids is not None
    pos = position_ids.contiguous() if has_pos else cos
    cs_sb = 0 if has_pos or cos.shape[0] == 1 else cos.stride(0)
    cs_ss = cos.stride(0) if has_pos else cos.stride(1)
    block = triton.next_power_of_2(max(d // 2, 1))
    block_h = min(triton.next_power_of_2(max(hq, k.shape[1], 1)), max(1, cfg["TILE"] // block))
    _rope_qk_kernel[(b * s,)](q, k, cos, sin, pos, qo, ko, s, hq, k.shape[1], d // 2,
                              q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                              qo.stride(0), qo.stride(1), qo.stride(2), ko.stride(0), ko.stride(1), ko.stride(2),
                              cs_sb, cs_ss, HAS_POS=has_pos, BLOCK=block, BLOCK_H=block_h, BACKWARD=backward,
                              num_warps=cfg["num_warps"])
    return qo, ko


def _rope_qk_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (q, k, cos, sin, position_ids), (dq, dk) = args, grads
    if not q.is_cuda or needs[2] or needs[3] or q.dtype == torch.float64:
        return None
    dq = torch.zeros_like(q) if dq is None else dq
    dk = torch.zeros_like(k) if dk is None else dk
    gq, gk = rope_qk_launch(dq, dk, cos, sin, position_ids, backward=True)
    return gq if needs[0] else None, gk if needs[1] else None, None, None, None


@zoo_custom_op("cudal1::rope_qk", mutates_args=(), ref=rope_qk_ref, fast_backward=_rope_qk_backward)
def _rope_qk_op(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                position_ids: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    if not q.is_cuda:
        qo, ko = rope_qk_ref(q, k, cos, sin, position_ids)
        return _out_like(q).copy_(qo), _out_like(k).copy_(ko)
    return rope_qk_launch(q, k, cos, sin, position_ids)


@_rope_qk_op.register_fake
def _(q, k, cos, sin, position_ids):
    return _out_like(q), _out_like(k)


def rope_qk(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
            position_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(q', k')``: RoPE on queries and keys in one kernel on CUDA (the reference on CPU); see the module
    docstring; ``torch.ops.cudal1.rope_qk``."""
    _check(q, k, cos, sin, position_ids)
    return call("rope_qk", q, k, cos, sin, position_ids)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel(
    "_rope_qk_kernel",
    {"q_ptr": "*bf16", "k_ptr": "*bf16", "cos_ptr": "*bf16", "sin_ptr": "*bf16", "pos_ptr": "*i64", "qo_ptr": "*bf16",
     "ko_ptr": "*bf16", "S": "i32", "HQ": "i32", "HK": "i32", "half": "i32", "q_sb": "i64", "q_sh": "i64",
     "q_ss": "i64", "k_sb": "i64", "k_sh": "i64", "k_ss": "i64", "qo_sb": "i64", "qo_sh": "i64", "qo_ss": "i64",
     "ko_sb": "i64", "ko_sh": "i64", "ko_ss": "i64", "cs_sb": "i64", "cs_ss": "i64"},
    constexprs={"HAS_POS": True, "BLOCK": 64, "BLOCK_H": 32, "BACKWARD": False})]
