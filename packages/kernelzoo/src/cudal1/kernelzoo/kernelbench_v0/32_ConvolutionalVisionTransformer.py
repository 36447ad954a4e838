"""KernelBench level 3, 32_ConvolutionalVisionTransformer (x: (10, 3, 32, 32) fp32 -> (10, 1000); 4x4 stride-4
patch conv 3 -> 128, flatten, Linear 8192 -> 128, class token concatenated -> (10, 2, 128), 6 post-norm
``nn.TransformerEncoderLayer`` (4 heads, MLP 512, ReLU, sequence-first: the 10 images are the sequence, the 2
tokens the batch), class-token row -> Linear 128 -> 1000).

Every tensor here is tiny (at most 10x8192); eager spends its time launching ~160 kernels, each costing host
time: launch-bound. Here the whole forward is ONE CUDA graph
(``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one input copy, one graph launch and one output
clone of host time. Inside it the encoder runs the task's own layers (the same fp32 kernels: identical
numerics); the class token and the projected image token are written straight into one (B, 2, D) buffer (no
``torch.cat``), the projection's GEMM writing its rows in place.

The graph should run in about the GPU time of ~150 tiny kernels.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


class ModelNew(nn.Module):
    def __init__(self, num_classes, embed_dim=512, num_heads=8, num_layers=6, mlp_ratio=4.0, patch_size=4,
                 in_channels=3):
        super().__init__()
        self.patch_size = patch_size
        self.conv1 = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.flatten = nn.Flatten()
        self.linear_proj = nn.Linear(embed_dim * (32 // patch_size) * (32 // patch_size), embed_dim)
        self.transformer_layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads,
                                       dim_feedforward=int(embed_dim * mlp_ratio), dropout=0.0)
            for _ in range(num_layers)])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.fc_out = nn.Linear(embed_dim, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        feats = self.flatten(self.conv1(x))
        proj = self.linear_proj
        tokens = torch.empty((b, 2, proj.out_features), device=x.device, dtype=x.dtype)
        tokens[:, 0] = self.cls_token[:, 0]
        torch.addmm(proj.bias, feats, proj.weight.t(), out=tokens[:, 1])
        for layer in self.transformer_layers:
            tokens = layer(tokens)
        return self.fc_out(tokens[:, 0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
