"""Transformer input embedding: token-embedding gather + position embedding + layer norm, in one pass::

    y[b, s] = layer_norm(tokens[ids[b, s]] + positions[s], weight, bias, eps)

Shapes: ``ids`` int64 (B, S) in [0, V); ``tokens`` (V, N); ``positions`` (P, N) with P >= S; ``weight``,
``bias`` (N,); float32, statistics in fp32; output (B, S, N). Memory traffic: the gathered rows are read
once and the output written once (position rows stay in cache), against a gather, a broadcast add and a
layer norm (three writes, four reads) in eager PyTorch. Indices are not range-checked on the GPU.

Backward (CUDA, fp32/bf16/fp16, rows up to the kernel's MAX_N): the shared row-norm backward kernel
(``_norm_backward``) gathers the rows again, recomputes the statistics and writes each row's gradient ``dh`` in
fp32 with ``dweight``, ``dbias`` as per-program column sums; ``dtokens`` is ``dh`` scattered by id
(``index_add_`` in fp32: repeated ids accumulate before the one rounding), ``dpositions[:S]`` the sum of ``dh``
over the batch. The reference's VJP elsewhere.
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
from ._index import check_index_range
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import backward_kernel, fused_norm_backward_launch, takes

__all__ = ["CONFIGS", "embedding_layer_norm", "embedding_layer_norm_launch", "embedding_layer_norm_ref"]


def embedding_layer_norm_ref(ids: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor, weight: torch.Tensor,
                             bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """PyTorch reference."""
    pos = positions[: ids.shape[1]]
    h = torch.nn.functional.embedding(ids, tokens) + pos
    return torch.nn.functional.layer_norm(h, (tokens.shape[1],), weight, bias, eps)


def _check(ids: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor) -> None:
    if ids.dim() != 2 or ids.dtype != torch.int64:
        raise ValueError(f"ids must be int64 (B, S), got {ids.dtype} {tuple(ids.shape)}")
    if tokens.dim() != 2 or positions.dim() != 2 or positions.shape[1] != tokens.shape[1]:
        raise ValueError(f"tokens (V, N) and positions (P, N) must share N, got {tuple(tokens.shape)} and "
                         f"{tuple(positions.shape)}")
    if positions.shape[0] < ids.shape[1]:
        raise ValueError(f"positions has {positions.shape[0]} rows, fewer than the sequence length {ids.shape[1]}")
    check_index_range("embedding_layer_norm", "ids", ids, tokens.shape[0])


def embedding_layer_norm_launch(ids: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor,
                                weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                                config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; returns a new (B, S, N) tensor."""
    _check(ids, tokens, positions)
    b, s = ids.shape
    tokens = tokens.contiguous()
    out = torch.empty(b, s, tokens.shape[1], device=tokens.device, dtype=tokens.dtype)
    return fused_norm_launch(tokens, out, b * s, ids=ids.contiguous(), residual=positions[:s].contiguous(),
                             res_period=max(s, 1), weight=weight, bias=bias, eps=eps, config=config)


def _embedding_layer_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (ids, tokens, positions, weight, bias, eps), (dy,) = args, grads
    if dy is None or not takes(tokens, weight, positions, bias):
        return None
    b, s = ids.shape
    n = tokens.shape[1]
    dh, dw, db, _ = fused_norm_backward_launch(tokens, dy, b * s, eps, ids=ids, residual=positions[:s],
                                               res_period=max(s, 1), weight=weight, bias=bias,
                                               dx_dtype=torch.float32)
    dh = dh.view(b * s, n)
    dtok = dpos = None
    if needs[1]:
        dtok = torch.zeros(tokens.shape, dtype=torch.float32, device=dh.device).index_add_(0, ids.reshape(-1), dh)
        dtok = dtok.to(tokens.dtype)
    if needs[2]:
        dpos = torch.zeros(positions.shape, dtype=torch.float32, device=dh.device)
        dpos[:s] = dh.view(b, s, n).sum(0)
        dpos = dpos.to(positions.dtype)
    return None, dtok, dpos, dw if needs[3] else None, db if needs[4] else None, None


@zoo_custom_op("cudal1::embedding_layer_norm", mutates_args=(), ref=embedding_layer_norm_ref,
               fast_backward=_embedding_layer_norm_backward)
def _embedding_layer_norm_op(ids: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor, weight: torch.Tensor,
                             bias: torch.Tensor, eps: float) -> torch.Tensor:
    if tokens.is_cuda:
        return embedding_layer_norm_launch(ids, tokens, positions, weight, bias, eps)
    return embedding_layer_norm_ref(ids, tokens, positions, weight, bias, eps).contiguous()


@_embedding_layer_norm_op.register_fake
def _(ids, tokens, positions, weight, bias, eps):
    return tokens.new_empty(ids.shape[0], ids.shape[1], tokens.shape[1])


def embedding_layer_norm(ids: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor, weight: torch.Tensor,
                         bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """``layer_norm(tokens[ids] + positions[:S])`` for int64 ``ids`` (B, S), float32 tables ``tokens`` (V, N),
    ``positions`` (P >= S, N) and ``weight``, ``bias`` (N,); output float32 (B, S, N). Triton on CUDA, the
    reference on CPU; ``torch.ops.cudal1.embedding_layer_norm``."""
    _check(ids, tokens, positions)
    return call("embedding_layer_norm", ids, tokens, positions, weight, bias, eps)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_fused_norm_kernel", SIGNATURE,
                               constexprs=dict(BASE_CONSTEXPRS, GATHER=True, HAS_RES=True, BLOCK_N=2048)),
                  backward_kernel(rms=False, bias=True, gather=True, residual=True)]
