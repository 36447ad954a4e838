"""KernelBench level 3, 30_SwinTransformerV2 (x: (10, 3, 224, 224) fp32; Swin V2-T: patch embed 4x4 + LayerNorm,
stages of depth (2, 2, 6, 2) at 56/28/14/7 tokens a side with 96/192/384/768 channels and 3/6/12/24 heads, 7x7
windows, every second block shifted by 3; scaled-cosine window attention with a continuous (MLP) relative
position bias, post-norm residuals, patch merging; LayerNorm, mean over tokens, Linear(768, 1000)).

Same parameters and buffers, by name, as the task; same math. The reference is host-bound: each block runs about
45 small eager ops (roll, window partition copy, qkv bias cat, reshape/permute copies, two F.normalize, the
relative-position MLP, gather, permute, sigmoid, the (B*nW, nH, 49, 49) score matrix built, scaled, biased, masked
and softmaxed in six passes, attn @ v, window reverse copy, roll back, two LayerNorms and two residual adds) for a
GPU that spends only a small part of the call on GEMM work. Here a block is ten launches:

* ``qkv`` linear WITHOUT bias on the tokens in their natural order (a per-token map commutes with the token
  permutation), then ONE Triton kernel reads each token's 3C row, adds q_bias / v_bias, L2-normalises q and k per
  head, multiplies q by ``exp(min(logit_scale, log 100))`` and scatters q, k, v straight into the rolled,
  window-partitioned (B, nW, nH, 49, d) layout (the roll and partition are index arithmetic);
* ONE Triton kernel evaluates the continuous position bias: per (head, query) row it runs the 2->512->nH cpb MLP
  on the rows' relative coordinates (gathered by ``relative_position_index``), applies 16*sigmoid and adds the
  shift mask of each window, into a 16-aligned buffer that SDPA reads as its additive mask (no padding copy);
* ``F.scaled_dot_product_attention(q', k', v, attn_mask=bias, scale=1)``: cos-sim logits times the clamped scale
  plus bias, softmax, @ v in one fp32 memory-efficient (CUTLASS, 3xTF32 = fp32-accurate) kernel; for shifted
  blocks the windows are folded into the head axis, so the (nW*nH, 49, 49) mask broadcasts over the batch;
* ``proj`` linear on the attention output as SDPA lays it out (a view, no transpose copy), then ONE Triton kernel
  gathers each token back from its window slot (window reverse + roll back as index math), LayerNorms it (norm1)
  and adds the shortcut;
* fc1 (+bias), GELU, fc2 (+bias), then ONE Triton kernel: x + norm2(mlp(x)).

Patch merging is one reshape copy (the 2x2 neighbour concat) + Linear + LayerNorm. About 150 launches instead of
about 600; the GEMMs are the same cuBLAS fp32 calls. CPU (and non-fp32) path: the same steps in plain torch
(roll, partition, F.normalize, the cpb MLP, SDPA with the same mask).

Harness: a long run once rejected this file as ``reference_drift`` (the reference timed much slower beside this
candidate than alone; the same rule's growing drift on other host-bound references in long runs is noted in
benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md); the file was taken out of the set then and
measured again, unchanged, in a short run of its own.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.swin import BasicLayer, Mlp, PatchEmbed, to_2tuple

_LOG100 = math.log(1.0 / 0.01)


# ----------------------------------------------------------------------------------------------- Triton kernels
@triton.jit
def _qkv_windows_kernel(qkv_ptr, qb_ptr, vb_ptr, ls_ptr, q_ptr, k_ptr, v_ptr, H, W, NWW, NW, SHIFT, C, NH,
                        max_log, WS: tl.constexpr, D: tl.constexpr, BLOCK_H: tl.constexpr):
    """One natural-order token: bias, per-head L2 normalisation, logit scale, scatter to its window slot."""
    t = tl.program_id(0)
    L = H * W
    b = t // L
    r = t % L
    hs = (r // W - SHIFT + H) % H  # row in the rolled frame: rolled[h'] = x[(h' + SHIFT) % H]
    wsft = (r % W - SHIFT + W) % W
    widx = (hs // WS) * NWW + wsft // WS
    n = (hs % WS) * WS + wsft % WS
    hh = tl.arange(0, BLOCK_H)
    dd = tl.arange(0, D)
    hm = hh < NH
    m = hm[:, None] & (dd[None, :] < D)
    col = hh[:, None] * D + dd[None, :]
    base = qkv_ptr + t.to(tl.int64) * (3 * C)
    q = tl.load(base + col, mask=m, other=0.0) + tl.load(qb_ptr + col, mask=m, other=0.0)
    k = tl.load(base + C + col, mask=m, other=0.0)
    v = tl.load(base + 2 * C + col, mask=m, other=0.0) + tl.load(vb_ptr + col, mask=m, other=0.0)
    qn = tl.maximum(tl.sqrt(tl.sum(q * q, axis=1)), 1e-12)
    kn = tl.maximum(tl.sqrt(tl.sum(k * k, axis=1)), 1e-12)
    scale = tl.exp(tl.minimum(tl.load(ls_ptr + hh, mask=hm, other=0.0), max_log))
    q = (q / qn[:, None]) * scale[:, None]
    k = k / kn[:, None]
    N: tl.constexpr = WS * WS
    out = (((b * NW + widx) * NH + hh[:, None]).to(tl.int64) * N + n) * D + dd[None, :]
    tl.store(q_ptr + out, q, mask=m)
    tl.store(k_ptr + out, k, mask=m)
    tl.store(v_ptr + out, v, mask=m)


@triton.jit
def _rel_bias_kernel(tab_ptr, idx_ptr, w1_ptr, b1_ptr, w2_ptr, mask_ptr, out_ptr, NH, NWM, HID, NP,
                     N: tl.constexpr, HAS_MASK: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_K: tl.constexpr):
    """One (head, query) row: cpb MLP on the gathered relative coords, 16*sigmoid, + each window's mask."""
    pid = tl.program_id(0)
    h = pid // N
    i = pid % N
    j = tl.arange(0, BLOCK_J)
    jm = j < N
    r = tl.load(idx_ptr + i * N + j, mask=jm, other=0)
    c0 = tl.load(tab_ptr + r * 2, mask=jm, other=0.0)
    c1 = tl.load(tab_ptr + r * 2 + 1, mask=jm, other=0.0)
    acc = tl.zeros([BLOCK_J], dtype=tl.float32)
    for k0 in range(0, HID, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        km = kk < HID
        w10 = tl.load(w1_ptr + kk * 2, mask=km, other=0.0)
        w11 = tl.load(w1_ptr + kk * 2 + 1, mask=km, other=0.0)
        bb = tl.load(b1_ptr + kk, mask=km, other=0.0)
        hid = tl.maximum(c0[:, None] * w10[None, :] + c1[:, None] * w11[None, :] + bb[None, :], 0.0)
        w2 = tl.load(w2_ptr + h * HID + kk, mask=km, other=0.0)
        acc += tl.sum(hid * w2[None, :], axis=1)
    val = 16.0 / (1.0 + tl.exp(-acc))
    if HAS_MASK:
        for wi in range(NWM):
            mk = tl.load(mask_ptr + (wi * N + i) * N + j, mask=jm, other=0.0)
            tl.store(out_ptr + ((wi * NH + h) * N + i) * NP + j, val + mk, mask=jm)
    else:
        tl.store(out_ptr + (h * N + i) * NP + j, val, mask=jm)


@triton.jit
def _residual_ln_kernel(y_ptr, sc_ptr, g_ptr, bt_ptr, out_ptr, H, W, NWW, SHIFT, sB, sW, sN, C, eps,
                        WS: tl.constexpr, GATHER: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[t] = shortcut[t] + LayerNorm(y[row(t)]); row(t) undoes the window partition and roll when GATHER."""
    t = tl.program_id(0)
    if GATHER:
        L = H * W
        b = t // L
        r = t % L
        hs = (r // W - SHIFT + H) % H
        wsft = (r % W - SHIFT + W) % W
        widx = (hs // WS) * NWW + wsft // WS
        n = (hs % WS) * WS + wsft % WS
        row = b * sB + widx * sW + n * sN
    else:
        row = t
    cols = tl.arange(0, BLOCK_C)
    m = cols < C
    y = tl.load(y_ptr + row.to(tl.int64) * C + cols, mask=m, other=0.0)
    mean = tl.sum(y, axis=0) / C
    d = tl.where(m, y - mean, 0.0)
    var = tl.sum(d * d, axis=0) / C
    rstd = 1.0 / tl.sqrt(var + eps)
    g = tl.load(g_ptr + cols, mask=m, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=m, other=0.0)
    sc = tl.load(sc_ptr + t.to(tl.int64) * C + cols, mask=m, other=0.0)
    tl.store(out_ptr + t.to(tl.int64) * C + cols, sc + d * rstd * g + bt, mask=m)


def _fast(x):
    return x.is_cuda and x.dtype == torch.float32


# ------------------------------------------------------------------------------------------------------ modules
def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


class WindowAttention(nn.Module):
    """Parameters and buffers of the task's WindowAttention; the computation lives in SwinTransformerBlock."""

    def __init__(self, dim, window_size, num_heads, qkv_bias=True, attn_drop=0., proj_drop=0.,
                 pretrained_window_size=(0, 0)):
        super().__init__()
        self.dim = dim
        self.window_size = window_size
        self.pretrained_window_size = pretrained_window_size
        self.num_heads = num_heads
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))), requires_grad=True)
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        rh = torch.arange(-(window_size[0] - 1), window_size[0], dtype=torch.float32)
        rw = torch.arange(-(window_size[1] - 1), window_size[1], dtype=torch.float32)
        table = torch.stack(torch.meshgrid([rh, rw], indexing="ij")).permute(1, 2, 0).contiguous().unsqueeze(0)
        den = pretrained_window_size if pretrained_window_size[0] > 0 else window_size
        table[:, :, :, 0] /= (den[0] - 1)
        table[:, :, :, 1] /= (den[1] - 1)
        table *= 8
        table = torch.sign(table) * torch.log2(torch.abs(table) + 1.0) / np.log2(8)
        self.register_buffer("relative_coords_table", table)
        coords = torch.stack(torch.meshgrid([torch.arange(window_size[0]), torch.arange(window_size[1])],
                                            indexing="ij"))
        cf = torch.flatten(coords, 1)
        rel = (cf[:, :, None] - cf[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window_size[0] - 1
        rel[:, :, 1] += window_size[1] - 1
        rel[:, :, 0] *= 2 * window_size[1] - 1
        self.register_buffer("relative_position_index", rel.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        if qkv_bias:
            self.q_bias = nn.Parameter(torch.zeros(dim))
            self.v_bias = nn.Parameter(torch.zeros(dim))
        else:
            self.q_bias = None
            self.v_bias = None
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.softmax = nn.Softmax(dim=-1)


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim, input_resolution, num_heads, window_size=7, shift_size=0,
                 mlp_ratio=4., qkv_bias=True, drop=0., attn_drop=0., drop_path=0.,
                 act_layer=nn.GELU, norm_layer=nn.LayerNorm, pretrained_window_size=0):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.num_heads = num_heads
        self.window_size = window_size
        self.shift_size = shift_size
        self.mlp_ratio = mlp_ratio
        if min(self.input_resolution) <= self.window_size:
            self.shift_size = 0
            self.window_size = min(self.input_resolution)
        assert 0 <= self.shift_size < self.window_size, "shift_size must in 0-window_size"
        self.norm1 = norm_layer(dim)
        self.attn = WindowAttention(
            dim, window_size=to_2tuple(self.window_size), num_heads=num_heads,
            qkv_bias=qkv_bias, attn_drop=attn_drop, proj_drop=drop,
            pretrained_window_size=to_2tuple(pretrained_window_size))
        self.drop_path = nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer, drop=drop)
        if self.shift_size > 0:
            H, W = self.input_resolution
            img_mask = torch.zeros((1, H, W, 1))
            ws, s = self.window_size, self.shift_size
            cnt = 0
            for h in (slice(0, -ws), slice(-ws, -s), slice(-s, None)):
                for w in (slice(0, -ws), slice(-ws, -s), slice(-s, None)):
                    img_mask[:, h, w, :] = cnt
                    cnt += 1
            mw = window_partition(img_mask, ws).view(-1, ws * ws)
            attn_mask = mw.unsqueeze(1) - mw.unsqueeze(2)
            attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)
        else:
            attn_mask = None
        self.register_buffer("attn_mask", attn_mask)

    # -- q, k, v in window layout (B, nW, nH, N, d); q pre-multiplied by the clamped logit scale
    def _qkv(self, x, B, H, W):
        a, ws, s, nH = self.attn, self.window_size, self.shift_size, self.num_heads
        C = x.shape[-1]
        d, N, nW = C // nH, ws * ws, (H // ws) * (W // ws)
        if a.q_bias is not None:
            qb, vb = a.q_bias, a.v_bias
        else:
            qb = vb = torch.zeros(C, device=x.device, dtype=x.dtype)
        qkv = F.linear(x, a.qkv.weight)  # (B, L, 3C), tokens in natural order; the bias is added below
        if _fast(x):
            q, k, v = (torch.empty(B, nW, nH, N, d, device=x.device, dtype=x.dtype) for _ in range(3))
            _qkv_windows_kernel[(B * H * W,)](
                qkv, qb.contiguous(), vb.contiguous(), a.logit_scale.contiguous(), q, k, v, H, W, W // ws, nW, s,
                C, nH, _LOG100, WS=ws, D=d, BLOCK_H=triton.next_power_of_2(nH), num_warps=1)
            return q, k, v
        t = qkv.view(B, H, W, 3 * C)
        if s > 0:
            t = torch.roll(t, shifts=(-s, -s), dims=(1, 2))
        t = t.view(B, H // ws, ws, W // ws, ws, 3, nH, d).permute(5, 0, 1, 3, 6, 2, 4, 7).reshape(3, B, nW, nH, N, d)
        q = F.normalize(t[0] + qb.view(nH, 1, d), dim=-1)
        k = F.normalize(t[1], dim=-1)
        v = t[2] + vb.view(nH, 1, d)
        scale = torch.clamp(a.logit_scale, max=_LOG100).exp()  # (nH, 1, 1)
        return q * scale, k, v

    # -- additive attention bias: 16*sigmoid(cpb) (+ mask), shape (nWm*nH, N, N) with nWm = nW or 1
    def _bias(self, x):
        a, ws, nH = self.attn, self.window_size, self.num_heads
        N = ws * ws
        mask = self.attn_mask
        nwm = mask.shape[0] if mask is not None else 1
        if _fast(x):
            w1, w2 = a.cpb_mlp[0], a.cpb_mlp[2]
            NP = (N + 15) // 16 * 16
            buf = torch.empty(nwm * nH, N, NP, device=x.device, dtype=x.dtype)
            _rel_bias_kernel[(nH * N,)](
                a.relative_coords_table.contiguous(), a.relative_position_index.contiguous(),
                w1.weight.contiguous(), w1.bias.contiguous(), w2.weight.contiguous(),
                mask.contiguous() if mask is not None else buf, buf, nH, nwm, w1.weight.shape[0], NP,
                N=N, HAS_MASK=mask is not None, BLOCK_J=triton.next_power_of_2(N), BLOCK_K=32, num_warps=4)
            return buf[:, :, :N]
        tab = a.cpb_mlp(a.relative_coords_table).view(-1, nH)
        rb = tab[a.relative_position_index.view(-1)].view(N, N, nH).permute(2, 0, 1)
        rb = 16 * torch.sigmoid(rb)
        if mask is not None:
            rb = rb.unsqueeze(0) + mask.unsqueeze(1)  # (nW, nH, N, N)
        return rb.reshape(nwm * nH, N, N)

    def _residual_ln(self, y, shortcut, norm, B, H, W, gather):
        """shortcut + norm(y), y's rows taken from window slots (strides gather = (sB, sW, sN)) when given."""
        C = shortcut.shape[-1]
        ws, s = self.window_size, self.shift_size
        if _fast(shortcut):
            out = torch.empty_like(shortcut)
            sB, sW, sN = gather if gather is not None else (0, 0, 0)
            _residual_ln_kernel[(B * H * W,)](
                y, shortcut, norm.weight, norm.bias, out, H, W, W // ws, s, sB, sW, sN, C, norm.eps,
                WS=ws, GATHER=gather is not None, BLOCK_C=triton.next_power_of_2(C),
                num_warps=4 if C >= 512 else (2 if C >= 256 else 1))
            return out
        if gather is not None:
            nW = (H // ws) * (W // ws)
            sB, sW, sN = gather
            y = y.as_strided((B, nW, ws * ws, C), (sB * C, sW * C, sN * C, 1))  # (B, nW, N, C) window order
            y = y.reshape(B, H // ws, W // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
            if s > 0:
                y = torch.roll(y, shifts=(s, s), dims=(1, 2))
            y = y.reshape(B, H * W, C)
        return shortcut + F.layer_norm(y, (C,), norm.weight, norm.bias, norm.eps)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        ws, nH = self.window_size, self.num_heads
        d, N, nW = C // nH, ws * ws, (H // ws) * (W // ws)
        x = x.contiguous()
        q, k, v = self._qkv(x, B, H, W)
        bias = self._bias(x)
        if self.attn_mask is not None:  # windows folded into heads: the (nW*nH) mask broadcasts over B
            q, k, v = (t.view(B, nW * nH, N, d) for t in (q, k, v))
            bias = bias.unsqueeze(0)
            gather = (N * nW, 1, nW)  # SDPA rows come out as (b, n, w)
        else:
            q, k, v = (t.view(B * nW, nH, N, d) for t in (q, k, v))
            bias = bias.unsqueeze(0)
            gather = (nW * N, N, 1)  # rows (b, w, n)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=1.0)
        o = o.transpose(1, 2).reshape(-1, C)  # a view of the efficient kernel's (B, N, heads, d) output
        y = F.linear(o, self.attn.proj.weight, self.attn.proj.bias)
        x = self._residual_ln(y, x, self.norm1, B, H, W, gather)
        return self._residual_ln(self.mlp(x), x, self.norm2, B, H, W, None)


class PatchMerging(nn.Module):
    def __init__(self, input_resolution, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.input_resolution = input_resolution
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        # [x0, x1, x2, x3] of the task = index (w parity, h parity) of each 2x2 cell: one reshape copy
        x = x.view(B, H // 2, 2, W // 2, 2, C).permute(0, 1, 3, 4, 2, 5).reshape(B, L // 4, 4 * C)
        return self.norm(self.reduction(x))


class ModelNew(nn.Module):
    def __init__(self, img_size=224, patch_size=4, in_chans=3, num_classes=1000,
                 embed_dim=96, depths=(2, 2, 6, 2), num_heads=(3, 6, 12, 24),
                 window_size=7, mlp_ratio=4., qkv_bias=True,
                 drop_rate=0., attn_drop_rate=0., drop_path_rate=0.1,
                 norm_layer=nn.LayerNorm, patch_norm=True,
                 use_checkpoint=False, pretrained_window_sizes=(0, 0, 0, 0), **kwargs):
        super().__init__()
        self.num_classes = num_classes
        self.num_layers = len(depths)
        self.embed_dim = embed_dim
        self.patch_norm = patch_norm
        self.num_features = int(embed_dim * 2 ** (self.num_layers - 1))
        self.mlp_ratio = mlp_ratio
        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
                                      embed_dim=embed_dim, norm_layer=norm_layer if self.patch_norm else None)
        pr = self.patch_embed.patches_resolution
        self.patches_resolution = pr
        self.pos_drop = nn.Dropout(p=drop_rate)
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
        self.layers = nn.ModuleList()
        for i in range(self.num_layers):
            self.layers.append(BasicLayer(
                SwinTransformerBlock,
                dim=int(embed_dim * 2 ** i), input_resolution=(pr[0] // (2 ** i), pr[1] // (2 ** i)),
                depth=depths[i], num_heads=num_heads[i], window_size=window_size, mlp_ratio=self.mlp_ratio,
                qkv_bias=qkv_bias, drop=drop_rate, attn_drop=attn_drop_rate,
                drop_path=dpr[sum(depths[:i]):sum(depths[:i + 1])], norm_layer=norm_layer,
                downsample=PatchMerging if (i < self.num_layers - 1) else None,
                use_checkpoint=use_checkpoint, pretrained_window_size=pretrained_window_sizes[i]))
        self.norm = norm_layer(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()

    def forward(self, x):
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x).mean(dim=1)  # AdaptiveAvgPool1d(1) over the tokens
        return self.head(x)
