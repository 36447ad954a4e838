"""Multi-head self-attention block, written out: LayerNorm(x + Wo(softmax(QK^T/sqrt(d)) V)).

Fused QKV projection, HEADS heads, output projection, residual add and post-LayerNorm.
x is float32 (BATCH, SEQ, DIM), standard-normal. No mask."""

import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 512
DIM = 1024
HEADS = 16


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        attn = attn.transpose(1, 2).reshape(b, s, d)
        return self.norm(x + self.out(attn))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS]
