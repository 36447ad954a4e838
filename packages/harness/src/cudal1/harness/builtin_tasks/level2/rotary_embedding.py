"""Rotary position embedding (RoPE, rotate-half form) applied to a query/key tensor.

cos/sin tables are built in forward from the positions 0..SEQ-1 and a fixed inverse-frequency
buffer; y = x * cos + rotate_half(x) * sin. x is float32 (BATCH, HEADS, SEQ, HEAD_DIM),
standard-normal."""

import torch
import torch.nn as nn

BATCH = 32
HEADS = 32
SEQ = 2048
HEAD_DIM = 128
BASE = 10000.0


class Model(nn.Module):
    def __init__(self, head_dim: int, base: float):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[-2]
        positions = torch.arange(seq, device=x.device, dtype=torch.float32)
        freqs = torch.outer(positions, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return [HEAD_DIM, BASE]
