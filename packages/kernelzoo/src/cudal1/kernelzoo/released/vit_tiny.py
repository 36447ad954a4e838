"""Released solution for built-in task `vit_tiny`: patch embedding as in the reference; in each encoder layer
the layer norms run in one Triton pass each, attention through torch's scaled_dot_product_attention in fp32
(no scores matrix in memory), and the projection and FFN GEMMs are cuBLAS fp32 without bias, each followed by
one fused Triton epilogue in place (bias + residual, bias + GELU); the head is a fused layer norm + addmm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm
from cudal1.kernelzoo.ops.bias_act import bias_act_


class EncoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x2: torch.Tensor, b: int, s: int) -> torch.Tensor:
        """x2: (b * s, dim) contiguous; returns the layer's output, same shape."""
        d = x2.shape[1]
        h = add_layer_norm(x2, None, self.norm1.weight, self.norm1.bias, eps=self.norm1.eps)
        qkv = torch.addmm(self.qkv.bias, h, self.qkv.weight.t())
        q, k, v = qkv.view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b * s, d)
        x1 = bias_act_(torch.matmul(attn, self.proj.weight.t()), bias=self.proj.bias, residual=x2)
        h = add_layer_norm(x1, None, self.norm2.weight, self.norm2.bias, eps=self.norm2.eps)
        f = bias_act_(torch.matmul(h, self.fc1.weight.t()), bias=self.fc1.bias, activation="gelu")
        return bias_act_(torch.matmul(f, self.fc2.weight.t()), bias=self.fc2.bias, residual=x1)


class ModelNew(nn.Module):
    def __init__(self, image_size: int, patch: int, dim: int, depth: int, heads: int, num_classes: int):
        super().__init__()
        num_patches = (image_size // patch) ** 2
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(tokens.shape[0], -1, -1)
        h = torch.cat((cls, tokens), dim=1) + self.pos_embed
        b, s, d = h.shape
        h = h.reshape(b * s, d)
        for layer in self.layers:
            h = layer(h, b, s)
        cls_out = add_layer_norm(h.view(b, s, d)[:, 0], None, self.norm.weight, self.norm.bias, eps=self.norm.eps)
        return torch.addmm(self.head.bias, cls_out, self.head.weight.t())
