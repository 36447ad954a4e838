"""KernelBench level 3, 28_VisionTransformer (img: (2, 3, 224, 224) fp32 -> (2, 10); 16x16 patches -> 196 tokens
+ class token, dim 512, 6 post-norm ``nn.TransformerEncoderLayer`` (8 heads, MLP 2048, ReLU, sequence-first: the
2 images are the sequence and the 197 tokens the batch), MLP head 512 -> 2048 -> GELU -> 10; dropout 0).

Eager launches ~25 kernels per encoder layer plus the embedding and head, ~170 in all, each costing host time,
for GEMMs of 394x512x512..2048 (small in fp32): launch-bound. Here the whole
forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one input copy, one
graph launch and one output clone of host time. Inside it the encoder runs the task's own layers (the same fp32
cuBLAS GEMMs, layer norms and attention kernels: identical numerics); the patch embedding writes the class token
row and the patch rows with the position embedding added in fewer passes (no ``torch.cat`` + in-place add).

The graph should run in about the GPU time of the kernels.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class ModelNew(nn.Module):
    def __init__(self, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels=3, dropout=0.1,
                 emb_dropout=0.1):
        super().__init__()
        assert image_size % patch_size == 0, "image_size must be a multiple of patch_size"
        num_patches = (image_size // patch_size) ** 2
        patch_dim = channels * patch_size ** 2
        self.patch_size = patch_size
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.patch_to_embedding = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)
        self.transformer = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model=dim, nhead=heads, dim_feedforward=mlp_dim, dropout=dropout),
            num_layers=depth, enable_nested_tensor=False)
        self.to_cls_token = nn.Identity()
        self.mlp_head = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
                                      nn.Linear(mlp_dim, num_classes))
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, img: torch.Tensor) -> torch.Tensor:
        p, b = self.patch_size, img.shape[0]
        patches = img.unfold(2, p, p).unfold(3, p, p).reshape(b, -1, p * p * img.shape[1])
        emb = self.patch_to_embedding
        x = torch.empty((b, patches.shape[1] + 1, emb.out_features), device=img.device, dtype=img.dtype)
        x[:, 0] = self.cls_token[:, 0] + self.pos_embedding[:, 0]
        # patch rows: (patches @ W^T + bias) + pos, the same two roundings as the task's linear then add
        torch.add(F.linear(patches, emb.weight, emb.bias), self.pos_embedding[:, 1:], out=x[:, 1:])
        x = self.transformer(self.dropout(x))
        return self.mlp_head(self.to_cls_token(x[:, 0]))

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        return self._graph(img)
