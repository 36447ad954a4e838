"""Tiny vision transformer: patch embedding, DEPTH encoder layers, classification head.

Patch embedding is a strided Conv2d; a class token and learned position embedding are added;
the pre-norm encoder layers are written out; final LayerNorm and a linear head on the class token.

x is float32 (BATCH, 3, IMAGE_SIZE, IMAGE_SIZE), standard-normal. Output is (BATCH, NUM_CLASSES)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IMAGE_SIZE = 224
PATCH = 16
DIM = 384
DEPTH = 4
HEADS = 6
NUM_CLASSES = 1000


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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
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
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h[:, 0]))


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IMAGE_SIZE, PATCH, DIM, DEPTH, HEADS, NUM_CLASSES]
