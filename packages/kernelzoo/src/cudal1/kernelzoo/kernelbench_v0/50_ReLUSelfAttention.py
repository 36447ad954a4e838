"""KernelBench level 3, 50_ReLUSelfAttention (x: (16, 1024, 768) fp32; Linear(768 -> 2304) for q, k, v; 12
heads of 64; scores (q @ k^T) / sqrt(64), masked to -inf where the registered ``bias`` buffer is 0, ReLU
instead of softmax, @ v; the heads re-assembled to (16, 1024, 768); ``c_proj`` is constructed but unused).

Eager materialises the (16, 12, 1024, 1024) fp32 score matrix (805 MB) and streams it through the scale,
masked_fill (plus the ``bias == 0`` comparison), ReLU and the second bmm (about 6.5 GB of traffic), then
copies the heads back together. Here, after the c_attn GEMM (cuBLAS SGEMM, unchanged), ONE Triton kernel
does the rest per (batch, head, 64-query block): it reads q, k, v straight out of the c_attn output (no
split/transpose copies), computes a 64x64 score tile, applies scale, mask and ReLU in registers (masked
entries become relu(-inf) = 0, as in the reference), multiplies by the v tile and accumulates, and writes
the output already in (B, T, C) layout. The mask comes from the CURRENT ``bias`` buffer every call (the
harness randomises buffers, so causality is not assumed and no block is skipped). Both tile products are
plain fp32 FMA (``input_precision="ieee"``). The score traffic and the second bmm
become one compute-bound kernel of 52 GFLOP; the 58 GFLOP c_attn GEMM stays.

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
def _relu_attn_kernel(qkv_ptr, mask_ptr, y_ptr, T, C, NH, mask_stride, scale,
                      HS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // NH).to(tl.int64)
    h = bh % NH
    rm = pid_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, HS)
    rn = tl.arange(0, BN)
    row3 = 3 * C
    base = qkv_ptr + b * T * row3 + h * HS  # q at +0, k at +C, v at +2C within each row of 3C
    m_ok = rm < T
    q = tl.load(base + rm[:, None] * row3 + rd[None, :], mask=m_ok[:, None], other=0.0)  # (BM, HS)
    acc = tl.zeros([BM, HS], dtype=tl.float32)
    for n0 in range(0, T, BN):
        cols = n0 + rn
        n_ok = cols < T
        kt = tl.load(base + C + cols[None, :] * row3 + rd[:, None], mask=n_ok[None, :], other=0.0)  # (HS, BN)
        s = tl.dot(q, kt, input_precision="ieee") * scale
        keep = tl.load(mask_ptr + rm[:, None] * mask_stride + cols[None, :],
                       mask=m_ok[:, None] & n_ok[None, :], other=0.0)
        p = tl.where(keep != 0, tl.maximum(s, 0.0), 0.0)  # masked_fill(-inf) then relu == 0
        v = tl.load(base + 2 * C + cols[:, None] * row3 + rd[None, :], mask=n_ok[:, None], other=0.0)  # (BN, HS)
        acc += tl.dot(p, v, input_precision="ieee")
    tl.store(y_ptr + b * T * C + rm[:, None] * C + h * HS + rd[None, :], acc, mask=m_ok[:, None])


def relu_attention(qkv: torch.Tensor, bias: torch.Tensor, n_head: int) -> torch.Tensor:
    """qkv (B, T, 3C) contiguous fp32 CUDA, bias (T, T) view with unit column stride -> y (B, T, C)."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // n_head
    y = torch.empty(B, T, C, device=qkv.device, dtype=qkv.dtype)
    grid = (triton.cdiv(T, 64), B * n_head)
    _relu_attn_kernel[grid](qkv, bias, y, T, C, n_head, bias.stride(0), 1.0 / math.sqrt(hs),
                            HS=hs, BM=64, BN=64, num_warps=4, num_stages=2)
    return y


def relu_attention_ref(qkv: torch.Tensor, bias: torch.Tensor, n_head: int) -> torch.Tensor:
    """The task's formulation (CPU path and odd head sizes)."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in qkv.split(C, dim=2))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = F.relu(att.masked_fill(bias == 0, float("-inf")))
    return (att @ v).transpose(1, 2).contiguous().view(B, T, C)


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                                     .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        qkv = self.c_attn(x).contiguous()
        bias = self.bias[0, 0, :T, :T]
        hs = C // self.n_head
        fast = (x.is_cuda and x.dtype == torch.float32 and bias.dtype == torch.float32 and bias.stride(1) == 1
                and hs >= 16 and hs <= 128 and (hs & (hs - 1)) == 0)
        if not fast:
            return relu_attention_ref(qkv, bias, self.n_head)
        return relu_attention(qkv, bias, self.n_head)
