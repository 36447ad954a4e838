"""The SSD (Mamba-2 state space dual) chunked scan as batched matmuls, and the KernelBench module around it (level 3
in ``kernelbench_v0``: 48_Mamba2ReturnY returns Y, 49_Mamba2ReturnFinalState the final state).

Shapes: x (B, L, H, P) = (batch, length, heads, d_head), a (B, L, H), b and c (B, L, H, N) with N = d_state, the
length cut into L / block_len chunks of block_len. :func:`ssd_scan` writes every contraction of the task's
einsums as batched matmuls over (batch, chunk, head) in the order of the math: chunk states = (X * decay)^T B,
the inter-chunk recurrence one (c+1) x (c+1) decay matmul, Y_diag = ((C B^T) * L) X, Y_off = (C S^T) *
exp(cumsum A); reshapes are plain views/permutes (no einops) and segsum is computed once for the chunks. For the
final state only what it depends on is computed (the last row of the chunk decay matrix; no Y). The same sums as
:func:`ssd_scan_ref` (the task's einsums), within fp32 rounding-order differences. Plain PyTorch: any device.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .cudagraph import CUDAGraphForward

__all__ = ["Mamba2SSD", "segsum_exp", "ssd_scan", "ssd_scan_ref"]


def segsum_exp(cs: torch.Tensor) -> torch.Tensor:
    """exp(cs[..., i] - cs[..., j]) for j <= i, 0 above the diagonal (cs: the cumulative sums along the last dim).
    cs (..., T) -> (..., T, T), cs's dtype."""
    t = cs.shape[-1]
    keep = torch.ones(t, t, device=cs.device, dtype=torch.bool).tril_()
    return torch.exp((cs[..., :, None] - cs[..., None, :]).masked_fill_(~keep, -torch.inf))


def ssd_scan(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, block_len: int,
             initial_states: torch.Tensor | None, want_y: bool) -> torch.Tensor:
    """The chunked SSD scan. x: (B, L, H, P), a: (B, L, H), b and c: (B, L, H, N), L a multiple of ``block_len``;
    ``initial_states`` None (zeros) or (B, 1, H, P, N). Returns Y (B, L, H, P) when ``want_y``, else the final
    state (B, H, P, N); x's dtype (fp32 in the tasks)."""
    bs, seq, h, p = x.shape
    n = b.shape[-1]
    nc, bl = seq // block_len, block_len
    xc = x.reshape(bs, nc, bl, h, p).permute(0, 1, 3, 2, 4)          # (B, c, H, l, P)
    bc = b.reshape(bs, nc, bl, h, n).permute(0, 1, 3, 2, 4)          # (B, c, H, l, N)
    acs = torch.cumsum(a.reshape(bs, nc, bl, h).permute(0, 1, 3, 2), dim=-1)   # (B, c, H, l)
    # chunk end states: states[p, n] = sum_l x[l, p] * exp(acs[-1] - acs[l]) * b[l, n]
    decay_states = torch.exp(acs[..., -1:] - acs)
    states = torch.matmul((xc * decay_states[..., None]).transpose(-1, -2), bc)   # (B, c, H, P, N)
    if initial_states is None:
        initial_states = torch.zeros_like(states[:, :1])
    states = torch.cat([initial_states, states], dim=1)             # (B, c+1, H, P, N)
    # inter-chunk recurrence: new[z] = sum_{k <= z} exp(cum[z] - cum[k]) * states[k]
    cum = torch.cumsum(F.pad(acs[..., -1].transpose(1, 2), (1, 0)), dim=-1)   # (B, H, c+1)
    decay_chunk = segsum_exp(cum)                                    # (B, H, c+1, c+1)
    flat = states.permute(0, 2, 1, 3, 4).reshape(bs, h, nc + 1, p * n)
    if not want_y:
        return torch.matmul(decay_chunk[:, :, -1:], flat).reshape(bs, h, p, n)
    prev = torch.matmul(decay_chunk[:, :, :-1], flat).reshape(bs, h, nc, p, n).transpose(1, 2)   # (B, c, H, P, N)
    cc = c.reshape(bs, nc, bl, h, n).permute(0, 1, 3, 2, 4)          # (B, c, H, l, N)
    # intra-chunk: y[l] = sum_s (c[l] . b[s]) * exp(acs[l] - acs[s]) [s <= l] * x[s]
    y = torch.matmul(torch.matmul(cc, bc.transpose(-1, -2)) * segsum_exp(acs), xc)
    # state contribution: y[l] += (c[l] . prev) * exp(acs[l])
    y += torch.matmul(cc, prev.transpose(-1, -2)) * torch.exp(acs)[..., None]
    return y.permute(0, 1, 3, 2, 4).reshape(bs, seq, h, p)


def ssd_scan_ref(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, block_len: int,
                 initial_states: torch.Tensor | None, want_y: bool) -> torch.Tensor:
    """:func:`ssd_scan` as KernelBench's tasks write it (their einsums; their einops rearranges as reshapes):
    the reference for tests. Same arguments and results."""
    bs, seq, h, p = x.shape
    nc = seq // block_len
    xb, ab, bb, cb = (t.reshape(bs, nc, block_len, *t.shape[2:]) for t in (x, a, b, c))
    ab = ab.permute(0, 3, 1, 2)                                        # b c l h -> b h c l
    a_cumsum = torch.cumsum(ab, dim=-1)

    def segsum(t: torch.Tensor) -> torch.Tensor:
        n = t.size(-1)
        tc = torch.cumsum(t, dim=-1)
        mask = torch.tril(torch.ones(n, n, device=t.device, dtype=torch.bool), diagonal=0)
        return (tc[..., :, None] - tc[..., None, :]).masked_fill(~mask, -torch.inf)

    decay_states = torch.exp(a_cumsum[:, :, :, -1:] - a_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", bb, decay_states, xb)
    if initial_states is None:
        initial_states = torch.zeros_like(states[:, :1])
    states = torch.cat([initial_states, states], dim=1)
    decay_chunk = torch.exp(segsum(F.pad(a_cumsum[:, :, :, -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    if not want_y:
        return new_states[:, -1]
    y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", cb, bb, torch.exp(segsum(ab)), xb)
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", cb, new_states[:, :-1], torch.exp(a_cumsum))
    return (y_diag + y_off).reshape(bs, seq, h, p)


class Mamba2SSD(nn.Module):
    """KernelBench's Mamba-2 module (its constructor arguments and parameters ``A`` (B, L, H), ``B`` and ``C``
    (B, L, H, N), drawn with ``torch.randn`` in that order) whose forward is :func:`ssd_scan`, captured once as a
    CUDA graph (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`; eager on CPU). Forward: X
    (B, L, H, P), optional ``initial_states`` (B, 1, H, P, N) -> Y (B, L, H, P) when ``want_y``, else the final
    state (B, H, P, N)."""

    def __init__(self, batch_size: int, seq_length: int, n_heads: int, d_head: int, d_state: int,
                 block_len: int = 64, *, want_y: bool) -> None:
        super().__init__()
        assert seq_length % block_len == 0, "seq_length must be a multiple of block_len"
        self.batch_size, self.seq_length, self.n_heads = batch_size, seq_length, n_heads
        self.d_head, self.d_state, self.block_len = d_head, d_state, block_len
        self.want_y = want_y
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, X: torch.Tensor, initial_states: torch.Tensor | None = None) -> torch.Tensor:
        return ssd_scan(X, self.A, self.B, self.C, self.block_len, initial_states, want_y=self.want_y)

    def forward(self, X: torch.Tensor, initial_states: torch.Tensor | None = None) -> torch.Tensor:
        return self._graph(X, initial_states)
