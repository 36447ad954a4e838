"""Released solution for built-in task `multihead_attention_block` (post-norm): attention through torch's
scaled_dot_product_attention in fp32 (no scores matrix in memory); the output projection is a cuBLAS fp32 GEMM
without bias followed by one fused Triton pass in place (bias + residual + layer norm)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm_


class ModelNew(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        x2 = x.reshape(b * s, d)
        qkv = torch.addmm(self.qkv.bias, x2, self.qkv.weight.t())
        q, k, v = qkv.view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b * s, d)
        y = torch.matmul(attn, self.out.weight.t())
        y = add_layer_norm_(y, x2, self.norm.weight, self.norm.bias, pre_bias=self.out.bias, eps=self.norm.eps)
        return y.view(b, s, d)
