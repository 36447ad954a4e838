"""KernelBench level 3, 48_Mamba2ReturnY (X: (16, 128, 8, 64) fp32 = (batch, length, heads, d_head); parameters
A: (16, 128, 8), B and C: (16, 128, 8, 16) with d_state 16; chunks of 64 -> Y: (16, 128, 8, 64)), the SSD
(Mamba-2 state space dual) chunked scan: intra-chunk output through the decay matrix L = exp(segsum(A)), chunk end
states, the inter-chunk recurrence, and the states' contribution to each chunk's output.

Every tensor is small (X is 4 MB); eager spends its time launching ~40 kernels (rearranges, cumsums, masks,
exps and four ``einsum`` contractions, one of them of four operands) at ~6-10 us of host time each. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it every contraction is written as batched matmuls over (batch, chunk, head) in the order of the math:
  Y_diag = ((C B^T) * L) X, chunk states = (X * decay)^T B, the recurrence one (c+1) x (c+1) decay matmul, Y_off
  = (C S^T) * exp(cumsum A): the same sums as the task's einsums (fp32, rounding-order differences only), with the
  reshapes done as plain views/permutes (no einops), segsum computed once for the chunks.

Expected: eager reference 1.93 ms on an H100; the graph runs ~25 small kernels, ~0.1-0.15 ms (~10x+).
Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 13.57x, 95% CI [13.19, 14.02] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


def _segsum_exp(cs: torch.Tensor) -> torch.Tensor:
    """exp(cs[..., i] - cs[..., j]) for j <= i, 0 above the diagonal (cs: the cumulative sums along the last dim)."""
    t = cs.shape[-1]
    keep = torch.ones(t, t, device=cs.device, dtype=torch.bool).tril_()
    return torch.exp((cs[..., :, None] - cs[..., None, :]).masked_fill_(~keep, -torch.inf))


def ssd_scan(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, block_len: int,
             initial_states: torch.Tensor | None, want_y: bool) -> torch.Tensor:
    """The chunked SSD scan. x: (B, L, H, P), a: (B, L, H), b and c: (B, L, H, N). Returns Y (B, L, H, P) when
    ``want_y``, else the final state (B, H, P, N)."""
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
    decay_chunk = _segsum_exp(cum)                                    # (B, H, c+1, c+1)
    flat = states.permute(0, 2, 1, 3, 4).reshape(bs, h, nc + 1, p * n)
    if not want_y:
        return torch.matmul(decay_chunk[:, :, -1:], flat).reshape(bs, h, p, n)
    prev = torch.matmul(decay_chunk[:, :, :-1], flat).reshape(bs, h, nc, p, n).transpose(1, 2)   # (B, c, H, P, N)
    cc = c.reshape(bs, nc, bl, h, n).permute(0, 1, 3, 2, 4)          # (B, c, H, l, N)
    # intra-chunk: y[l] = sum_s (c[l] . b[s]) * exp(acs[l] - acs[s]) [s <= l] * x[s]
    y = torch.matmul(torch.matmul(cc, bc.transpose(-1, -2)) * _segsum_exp(acs), xc)
    # state contribution: y[l] += (c[l] . prev) * exp(acs[l])
    y += torch.matmul(cc, prev.transpose(-1, -2)) * torch.exp(acs)[..., None]
    return y.permute(0, 1, 3, 2, 4).reshape(bs, seq, h, p)


class ModelNew(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__()
        assert seq_length % block_len == 0, "seq_length must be a multiple of block_len"
        self.batch_size, self.seq_length, self.n_heads = batch_size, seq_length, n_heads
        self.d_head, self.d_state, self.block_len = d_head, d_state, block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, X: torch.Tensor, initial_states: torch.Tensor | None = None) -> torch.Tensor:
        return ssd_scan(X, self.A, self.B, self.C, self.block_len, initial_states, want_y=True)

    def forward(self, X: torch.Tensor, initial_states: torch.Tensor | None = None) -> torch.Tensor:
        return self._graph(X, initial_states)
