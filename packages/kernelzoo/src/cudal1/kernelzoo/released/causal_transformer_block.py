"""Released solution for built-in task `causal_transformer_block` (GPT-style, pre-norm): layer norms in one
Triton pass each; causal attention through torch's scaled_dot_product_attention in fp32 (is_causal: the same
mask as the reference's triu(diagonal=1), no scores matrix in memory); the projection and FFN GEMMs are cuBLAS
fp32 without bias, each followed by one fused Triton epilogue in place (bias + residual, bias + GELU)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm
from cudal1.kernelzoo.ops.bias_act import bias_act_


class ModelNew(nn.Module):
    def __init__(self, dim: int, heads: int, max_seq: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.max_seq = max_seq
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        if s > self.max_seq:
            raise ValueError(f"sequence length {s} exceeds max_seq {self.max_seq}")
        x2 = x.reshape(b * s, d)
        h = add_layer_norm(x2, None, self.norm1.weight, self.norm1.bias, eps=self.norm1.eps)
        qkv = torch.addmm(self.qkv.bias, h, self.qkv.weight.t())
        q, k, v = qkv.view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b * s, d)
        x1 = bias_act_(torch.matmul(attn, self.proj.weight.t()), bias=self.proj.bias, residual=x2)
        h = add_layer_norm(x1, None, self.norm2.weight, self.norm2.bias, eps=self.norm2.eps)
        f = bias_act_(torch.matmul(h, self.fc1.weight.t()), bias=self.fc1.bias, activation="gelu")
        out = bias_act_(torch.matmul(f, self.fc2.weight.t()), bias=self.fc2.bias, residual=x1)
        return out.view(b, s, d)
