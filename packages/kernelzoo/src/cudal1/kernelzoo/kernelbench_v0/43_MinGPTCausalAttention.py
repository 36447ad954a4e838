"""KernelBench level 3, 43_MinGPTCausalAttention (x: (128, 512, 768) fp32; minGPT masked self-attention:
Linear(768 -> 2304) for q, k, v; 8 heads of 96; scores scaled by 1/sqrt(96), masked where the registered
``bias`` buffer is 0, softmax, dropout (p = 0, and eval mode), @ v; Linear(768 -> 768)).

Eager materialises the (128, 8, 512, 512) score matrix (1 GiB in fp32) and streams it through the scale,
the masked_fill (plus the ``bias == 0`` comparison), the softmax and the second bmm: about 8 GB of traffic on
top of the two attention GEMMs. Here the attention is one ``F.scaled_dot_product_attention`` call with the
mask taken from the CURRENT ``bias`` buffer every call (``bias[:, :, :T, :T] != 0`` as a boolean mask: the
harness randomises buffers, so the mask is not assumed causal). In fp32 on Hopper (sm_90) this runs
PyTorch's memory-efficient (CUTLASS) attention, whose fp32 GEMMs are 3xTF32 (``OpMultiplyAddFastF32``: fp32-level
accuracy, not TF32) with an online softmax: the score matrix never reaches memory. The two Linear layers stay
cuBLAS SGEMMs, unchanged; the gain comes from removing the attention's memory traffic. Edge case: a query row
whose mask is all zero gives NaN in the reference (softmax of all -inf); no randomised buffer has exact zeros.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                                     .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs), strided views: no copies
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        keep = self.bias[:, :, :T, :T] != 0  # True = attend, from the buffer's current values
        p = self.attn_dropout.p if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=p, scale=1.0 / math.sqrt(hs))
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.resid_dropout(self.c_proj(y))
