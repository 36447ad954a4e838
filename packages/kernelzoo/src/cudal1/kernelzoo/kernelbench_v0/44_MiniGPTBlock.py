"""KernelBench level 3, 44_MiniGPTBlock (x: (128, 512, 768) fp32; a minGPT transformer block:
x + attn(ln_1(x)), then + mlp(ln_2(.)) with attn = masked self-attention (8 heads of 96, mask from the
registered ``bias`` buffer) and mlp = Linear(768 -> 3072), minGPT's tanh GELU, Linear(3072 -> 768)).

Two memory-bound parts of eager are replaced; the four Linear layers (about 930 GFLOP) stay cuBLAS SGEMMs:
- attention: eager materialises the (128, 8, 512, 512) fp32 score matrix (1 GiB) and streams it through the
  scale, masked_fill, softmax and the second bmm (about 8 GB of traffic). Here it is one
  ``F.scaled_dot_product_attention`` call with a boolean mask from the CURRENT ``bias`` buffer every call
  (``bias[:, :, :T, :T] != 0``: the harness randomises buffers, so causality is not assumed). In fp32 on
  Hopper (sm_90) that is PyTorch's memory-efficient (CUTLASS) attention with 3xTF32 GEMMs (fp32-level accuracy,
  not TF32) and an online softmax: the score matrix never reaches memory.
- NewGELU on the (65536, 3072) hidden activation (805 MB): eager runs it as eight elementwise kernels (pow,
  mul, add, mul, tanh, add, mul, mul), about 11 GB of traffic; here one Triton kernel (one read, one write).
The gain comes from the attention and GELU traffic; the GEMMs are unchanged. Edge case: a query row whose mask
is all zero gives NaN in the reference; no randomised buffer has exact zeros.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _new_gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * (x * x * x))  # sqrt(2 / pi) * (x + 0.044715 x^3)
    e = tl.exp(-2.0 * tl.abs(u))  # overflow-free tanh(u) = sign(u) (1 - e) / (1 + e)
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(u < 0, -t, t)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


class NewGELU(nn.Module):
    def forward(self, x):
        if not (x.is_cuda and x.dtype == torch.float32):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        if n:
            _new_gelu_kernel[(triton.cdiv(n, 4096),)](xc, y, n, BLOCK=4096, num_warps=8)
        return y


class CausalSelfAttention(nn.Module):
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


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(n_embd, 4 * n_embd),
            c_proj=nn.Linear(4 * n_embd, n_embd),
            act=NewGELU(),
            dropout=nn.Dropout(resid_pdrop),
        ))

    def forward(self, x):
        m = self.mlp
        x = x + self.attn(self.ln_1(x))
        return x + m.dropout(m.c_proj(m.act(m.c_fc(self.ln_2(x)))))
