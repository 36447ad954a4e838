"""KernelBench level 3, 31_VisionAttention (x: (2, 128, 128, 128) fp32, read as a sequence of 16384 pixels of
128 channels; nn.MultiheadAttention(128, 4 heads of 32) self-attention, residual add, LayerNorm(128)).

The reference calls ``self.attn(x, x, x)`` with the default ``need_weights=True`` and ``batch_first=False``,
so PyTorch takes the slow path: it materialises the (8, 16384, 16384) fp32 attention matrix (8.6 GB), runs
softmax over it, multiplies it by v, and then averages it over the heads for the weights the task throws
away: roughly 45 GB of memory traffic. Here the same projections use the module's own parameters
(``attn.in_proj_weight``/``in_proj_bias``, ``attn.out_proj``), the attention is one
``F.scaled_dot_product_attention`` call (same 1/sqrt(32) scale, no mask, dropout 0 as the module has), and the
unused head-averaged weights are never formed. In fp32 on Hopper SDPA runs PyTorch's memory-efficient
(CUTLASS) attention: 3xTF32 GEMMs (fp32-level accuracy, not TF32) with an online softmax, so the score matrix
never reaches memory. The residual add and LayerNorm are unchanged. The reference is dominated by the
score-matrix traffic; the fused kernel does the 275 GFLOP on tensor cores.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        B, C, H, W = x.shape
        L, nh = H * W, self.attn.num_heads
        hd = C // nh
        xs = x.view(B, C, L).transpose(1, 2)  # (B, L, C): batch first, a strided view
        qkv = F.linear(xs, self.attn.in_proj_weight, self.attn.in_proj_bias)  # (B, L, 3C)
        q, k, v = (t.view(B, L, nh, hd).transpose(1, 2) for t in qkv.split(C, dim=2))  # (B, nh, L, hd)
        p = self.attn.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p)  # scale 1/sqrt(hd), as the module's
        y = F.linear(y.transpose(1, 2).reshape(B, L, C), self.attn.out_proj.weight, self.attn.out_proj.bias)
        y = self.norm(y + xs)  # (B, L, C)
        return y.transpose(1, 2).view(B, C, H, W)
