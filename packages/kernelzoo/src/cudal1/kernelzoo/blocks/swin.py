"""The module scaffolding the KernelBench Swin tasks (level 3: 29_SwinMLP, 30_SwinTransformerV2) share, with the
tasks' parameter names (the harness shares parameters between reference and solution by name): the MLP's
parameters, a stage (``blocks`` + ``downsample``) built from any block class, and the patch embedding's
convolution and norm. The solutions supply their own fused block, merging and embedding forwards.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn

__all__ = ["BasicLayer", "Mlp", "PatchEmbed", "to_2tuple"]


def to_2tuple(x: Any) -> tuple:
    """``x`` as a pair: an iterable (not a string) as a tuple, anything else repeated twice."""
    if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
        return tuple(x)
    return (x, x)


class Mlp(nn.Module):
    """``fc2(gelu(fc1(x)))`` (dropout 0 and inference: identity); ``act_layer`` and ``drop`` are kept for the
    tasks' signature."""

    def __init__(self, in_features: int, hidden_features: int | None = None, out_features: int | None = None,
                 act_layer: Callable[[], nn.Module] = nn.GELU, drop: float = 0.0):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class BasicLayer(nn.Module):
    """One stage: ``depth`` blocks of class ``block`` (every second one shifted by half a window) and an optional
    ``downsample(input_resolution, dim=dim, norm_layer=norm_layer)``; ``block_kwargs`` (heads, MLP ratio, dropout
    rates, ...) go to every block as they are."""

    def __init__(self, block: Callable[..., nn.Module], dim: int, input_resolution: tuple[int, int], depth: int,
                 window_size: int, drop_path: float | list[float] = 0.0, norm_layer: Callable[..., nn.Module] =
                 nn.LayerNorm, downsample: Callable[..., nn.Module] | None = None, use_checkpoint: bool = False,
                 **block_kwargs: Any):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.depth = depth
        self.use_checkpoint = use_checkpoint
        self.blocks = nn.ModuleList([
            block(dim=dim, input_resolution=input_resolution, window_size=window_size,
                  shift_size=0 if (i % 2 == 0) else window_size // 2,
                  drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path, norm_layer=norm_layer,
                  **block_kwargs)
            for i in range(depth)])
        self.downsample = downsample(input_resolution, dim=dim, norm_layer=norm_layer) if downsample else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        if self.downsample is not None:
            x = self.downsample(x)
        return x


class PatchEmbed(nn.Module):
    """``norm(proj(x).flatten(2).transpose(1, 2))``: a ``patch_size``-strided convolution to ``embed_dim``
    channels, tokens ``(B, L, embed_dim)``, then the optional norm."""

    def __init__(self, img_size: int = 224, patch_size: int = 4, in_chans: int = 3, embed_dim: int = 96,
                 norm_layer: Callable[..., nn.Module] | None = None):
        super().__init__()
        img_size = to_2tuple(img_size)
        patch_size = to_2tuple(patch_size)
        patches_resolution = [img_size[0] // patch_size[0], img_size[1] // patch_size[1]]
        self.img_size = img_size
        self.patch_size = patch_size
        self.patches_resolution = patches_resolution
        self.num_patches = patches_resolution[0] * patches_resolution[1]
        self.in_chans = in_chans
        self.embed_dim = embed_dim
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = norm_layer(embed_dim) if norm_layer is not None else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.proj(x).flatten(2).transpose(1, 2)
        return self.norm(x) if self.norm is not None else x
