"""Released solution for built-in task `rotary_embedding`: RoPE in one Triton pass over x (one read, one
write); the small (SEQ, HEAD_DIM / 2) cos/sin tables are built in forward from the current inv_freq buffer,
exactly as the reference builds them."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.rotary import rotary, rotary_tables


class ModelNew(nn.Module):
    def __init__(self, head_dim: int, base: float):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cos, sin = rotary_tables(x.shape[-2], self.inv_freq)
        return rotary(x, cos, sin)
