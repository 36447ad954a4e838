"""KernelBench level 3, 29_SwinMLP, second version: the first version's kernels with the whole forward replayed
as ONE CUDA graph.

Task: x (10, 3, 224, 224) fp32 -> (10, 1000); Swin-MLP-T: patch embed 4x4 + LayerNorm, stages of depth
(2, 2, 6, 2) at 56/28/14/7 tokens a side with 96/192/384/768 channels and 3/6/12/24 heads (head dim 32), 7x7
windows, every second block shifted by zero-padding; the window "attention" is a grouped Conv1d(nH*49, nH*49, 1,
groups=nH); patch merging (2x2 concat, LayerNorm(4C), Linear(4C, 2C)); LayerNorm, mean over tokens, Linear.

The kernels and the per-block structure are the first version's (unchanged below): per block one Triton kernel
for norm1 + shift padding + window partition + head transpose, the grouped Conv1d as one ``torch.bmm``, one
Triton kernel for window reverse + crop + conv bias + residual + norm2, fc1, GELU and fc2 with the residual in
the GEMM epilogue; Triton patch-merge, embed-norm and head kernels. That version ran about 82 launches a call,
about 40 of them Triton launches (each costly in host time) plus the cuBLAS calls and allocations, and in stages
3-4 (14x14 and 7x7 tokens) every kernel is little GPU work, so the host paces the GPU there. Here ``_forward`` is
captured once (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``) and each call is three launches: the 6 MB
input copy, the replay, the (10, 1000) output clone. There is no batch norm to fold (LayerNorms only, already
fused into the Triton kernels' reads and writes).
A call should then take the GPU time of the kernels (~45 GFLOP of cuBLAS fp32 GEMMs plus ~1 GB of memory passes).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""


import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.swin import BasicLayer, Mlp
from cudal1.kernelzoo.blocks.swin import PatchEmbed as SwinPatchEmbed


# ----------------------------------------------------------------------------------------------- Triton kernels
@triton.jit
def _norm1_windows_kernel(x_ptr, g_ptr, bt_ptr, out_ptr, T, H, W, HP, WP, PT, PL, NWW, NW, NWB, C, eps,
                          WS: tl.constexpr, D: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """BLOCK_T slots of the padded grid (B, HP, WP): LayerNorm of the token there (0 in the padding), stored at
    out[head, n, window, dd] (the (nH, N, B*nW, D) layout of the head-grouped window MLP)."""
    N: tl.constexpr = WS * WS
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tm = t < T
    b = t // (HP * WP)
    r = t % (HP * WP)
    hp = r // WP
    wp = r % WP
    hs = hp - PT
    wsrc = wp - PL
    valid = tm & (hs >= 0) & (hs < H) & (wsrc >= 0) & (wsrc < W)
    src = (b * H + hs) * W + wsrc
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C
    m = valid[:, None] & cm[None, :]
    x = tl.load(x_ptr + src.to(tl.int64)[:, None] * C + cols[None, :], mask=m, other=0.0)
    mean = tl.sum(x, axis=1) / C
    dlt = tl.where(cm[None, :], x - mean[:, None], 0.0)
    var = tl.sum(dlt * dlt, axis=1) / C
    rstd = 1.0 / tl.sqrt(var + eps)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=cm, other=0.0)
    y = dlt * rstd[:, None] * g[None, :] + bt[None, :]
    y = tl.where(valid[:, None], y, 0.0)
    wb = b * NW + (hp // WS) * NWW + wp // WS
    n = (hp % WS) * WS + wp % WS
    head = cols // D
    dd = cols % D
    out = ((head[None, :] * N + n[:, None]).to(tl.int64) * NWB + wb[:, None]) * D + dd[None, :]
    tl.store(out_ptr + out, y, mask=tm[:, None] & cm[None, :])


@triton.jit
def _unwindow_residual_norm2_kernel(y_ptr, sb_ptr, x_ptr, g_ptr, bt_ptr, b2_ptr, res_ptr, xn_ptr, T, H, W, PT, PL,
                                    NWW, NW, NWB, C, eps, WS: tl.constexpr, D: tl.constexpr,
                                    BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """BLOCK_T original tokens: x1 = x + Y[window slot] + conv bias; res = x1 + fc2.bias; xn = norm2(x1)."""
    N: tl.constexpr = WS * WS
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tm = t < T
    b = t // (H * W)
    r = t % (H * W)
    hp = r // W + PT
    wp = r % W + PL
    wb = b * NW + (hp // WS) * NWW + wp // WS
    n = (hp % WS) * WS + wp % WS
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C
    m = tm[:, None] & cm[None, :]
    head = cols // D
    dd = cols % D
    hn = head[None, :] * N + n[:, None]
    y = tl.load(y_ptr + (hn.to(tl.int64) * NWB + wb[:, None]) * D + dd[None, :], mask=m, other=0.0)
    y += tl.load(sb_ptr + hn, mask=m, other=0.0)
    row = t.to(tl.int64)[:, None] * C + cols[None, :]
    x1 = tl.load(x_ptr + row, mask=m, other=0.0) + y
    mean = tl.sum(x1, axis=1) / C
    dlt = tl.where(cm[None, :], x1 - mean[:, None], 0.0)
    var = tl.sum(dlt * dlt, axis=1) / C
    rstd = 1.0 / tl.sqrt(var + eps)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=cm, other=0.0)
    b2 = tl.load(b2_ptr + cols, mask=cm, other=0.0)
    tl.store(res_ptr + row, x1 + b2[None, :], mask=m)
    tl.store(xn_ptr + row, dlt * rstd[:, None] * g[None, :] + bt[None, :], mask=m)


@triton.jit
def _merge_norm_kernel(x_ptr, g_ptr, bt_ptr, out_ptr, T, H, W, C, eps, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """BLOCK_T merged tokens: the task's [x0, x1, x2, x3] concat of each 2x2 cell, then LayerNorm(4C)."""
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tm = t < T
    W2 = W // 2
    HW4 = (H // 2) * W2
    b = t // HW4
    r = t % HW4
    i = r // W2
    j = r % W2
    C4 = 4 * C
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C4
    k = cols // C
    c = cols % C
    hpar = k % 2  # x0 = (0, 0), x1 = (h 1, w 0), x2 = (h 0, w 1), x3 = (1, 1)
    wpar = k // 2
    src = ((b * H)[:, None] + 2 * i[:, None] + hpar[None, :]) * W + 2 * j[:, None] + wpar[None, :]
    m = tm[:, None] & cm[None, :]
    x = tl.load(x_ptr + src.to(tl.int64) * C + c[None, :], mask=m, other=0.0)
    mean = tl.sum(x, axis=1) / C4
    dlt = tl.where(cm[None, :], x - mean[:, None], 0.0)
    var = tl.sum(dlt * dlt, axis=1) / C4
    rstd = 1.0 / tl.sqrt(var + eps)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=cm, other=0.0)
    tl.store(out_ptr + t.to(tl.int64)[:, None] * C4 + cols[None, :], dlt * rstd[:, None] * g[None, :] + bt[None, :],
             mask=m)


@triton.jit
def _embed_norm_kernel(y_ptr, g_ptr, bt_ptr, out_ptr, T, L, C, eps, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """BLOCK_T tokens of the patch conv's (B, C, L) output: LayerNorm over C, stored as (B, L, C)."""
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tm = t < T
    b = t // L
    l_ = t % L
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C
    m = tm[:, None] & cm[None, :]
    x = tl.load(y_ptr + (b.to(tl.int64) * C)[:, None] * L + cols[None, :] * L + l_[:, None], mask=m, other=0.0)
    mean = tl.sum(x, axis=1) / C
    dlt = tl.where(cm[None, :], x - mean[:, None], 0.0)
    var = tl.sum(dlt * dlt, axis=1) / C
    rstd = 1.0 / tl.sqrt(var + eps)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=cm, other=0.0)
    tl.store(out_ptr + t.to(tl.int64)[:, None] * C + cols[None, :], dlt * rstd[:, None] * g[None, :] + bt[None, :],
             mask=m)


@triton.jit
def _norm_mean_kernel(x_ptr, g_ptr, bt_ptr, out_ptr, L, C, eps, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """One batch row: mean over its L tokens of LayerNorm(token)."""
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for l0 in range(0, L, BLOCK_T):
        t = l0 + tl.arange(0, BLOCK_T)
        tm = t < L
        m = tm[:, None] & cm[None, :]
        x = tl.load(x_ptr + (b * L + t).to(tl.int64)[:, None] * C + cols[None, :], mask=m, other=0.0)
        mean = tl.sum(x, axis=1) / C
        dlt = tl.where(cm[None, :], x - mean[:, None], 0.0)
        var = tl.sum(dlt * dlt, axis=1) / C
        rstd = 1.0 / tl.sqrt(var + eps)
        acc += tl.sum(tl.where(tm[:, None], dlt * rstd[:, None], 0.0), axis=0)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bt = tl.load(bt_ptr + cols, mask=cm, other=0.0)
    tl.store(out_ptr + b * C + cols, acc / L * g + bt, mask=cm)


def _fast(x):
    return x.is_cuda and x.dtype == torch.float32


def _tile(c):
    """(BLOCK_T, BLOCK_C, num_warps) for row-wise kernels over rows of c channels: 2048-element tiles, 16 elements
    a thread (ptxas for sm90a: <= 164 registers, no spills; 4096-element tiles hit 255 registers and spill)."""
    bc = triton.next_power_of_2(c)
    return max(1, 2048 // bc), bc, 4


# ------------------------------------------------------------------------------------------------------ modules

class SwinMLPBlock(nn.Module):
    def __init__(self, dim, input_resolution, num_heads, window_size=7, shift_size=0,
                 mlp_ratio=4., drop=0., drop_path=0.,
                 act_layer=nn.GELU, norm_layer=nn.LayerNorm):
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
        self.padding = [self.window_size - self.shift_size, self.shift_size,
                        self.window_size - self.shift_size, self.shift_size]  # P_l, P_r, P_t, P_b
        self.norm1 = norm_layer(dim)
        self.spatial_mlp = nn.Conv1d(self.num_heads * self.window_size ** 2, self.num_heads * self.window_size ** 2,
                                     kernel_size=1, groups=self.num_heads)
        self.drop_path = nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio), act_layer=act_layer, drop=drop)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        ws, nH = self.window_size, self.num_heads
        d, N = C // nH, ws * ws
        pl, pr, pt, pb = self.padding if self.shift_size > 0 else (0, 0, 0, 0)
        HP, WP = H + pt + pb, W + pl + pr
        nWw = WP // ws
        nW = (HP // ws) * nWw
        nWB = B * nW
        x = x.contiguous()
        n1, n2, fc1, fc2 = self.norm1, self.norm2, self.mlp.fc1, self.mlp.fc2
        w_sp = self.spatial_mlp.weight.view(nH, N, N)
        b_sp = self.spatial_mlp.bias
        if _fast(x):
            xw = torch.empty(nH, N, nWB, d, device=x.device, dtype=x.dtype)
            bt, bc, nwarps = _tile(C)
            T = B * HP * WP
            _norm1_windows_kernel[(triton.cdiv(T, bt),)](
                x, n1.weight, n1.bias, xw, T, H, W, HP, WP, pt, pl, nWw, nW, nWB, C, n1.eps,
                WS=ws, D=d, BLOCK_T=bt, BLOCK_C=bc, num_warps=nwarps)
            yw = torch.bmm(w_sp, xw.view(nH, N, nWB * d))
            res = torch.empty_like(x)
            xn = torch.empty_like(x)
            T = B * L
            _unwindow_residual_norm2_kernel[(triton.cdiv(T, bt),)](
                yw, b_sp, x, n2.weight, n2.bias, fc2.bias, res, xn, T, H, W, pt, pl, nWw, nW, nWB, C, n2.eps,
                WS=ws, D=d, BLOCK_T=bt, BLOCK_C=bc, num_warps=nwarps)
        else:
            t = F.layer_norm(x, (C,), n1.weight, n1.bias, n1.eps).view(B, H, W, C)
            t = F.pad(t, [0, 0, pl, pr, pt, pb])
            # (B, HP/ws, ws, WP/ws, ws, nH, d) -> (nH, ws, ws, B, HP/ws, WP/ws, d) = (nH, N, B*nW, d)
            t = t.view(B, HP // ws, ws, WP // ws, ws, nH, d).permute(5, 2, 4, 0, 1, 3, 6).reshape(nH, N, nWB * d)
            yw = torch.bmm(w_sp, t).view(nH, N, nWB, d) + b_sp.view(nH, N, 1, 1)
            y = yw.view(nH, ws, ws, B, HP // ws, WP // ws, d).permute(3, 4, 1, 5, 2, 0, 6).reshape(B, HP, WP, C)
            y = y[:, pt:HP - pb, pl:WP - pr, :].reshape(B, L, C)
            x1 = x + y
            xn = F.layer_norm(x1, (C,), n2.weight, n2.bias, n2.eps)
            res = x1 + fc2.bias
        h = F.gelu(F.linear(xn, fc1.weight, fc1.bias))
        return res.view(B * L, C).addmm_(h.view(B * L, -1), fc2.weight.t()).view(B, L, C)


class PatchMerging(nn.Module):
    def __init__(self, input_resolution, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.input_resolution = input_resolution
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        nrm = self.norm
        if _fast(x):
            x = x.contiguous()
            T = B * (L // 4)
            out = torch.empty(B, L // 4, 4 * C, device=x.device, dtype=x.dtype)
            bt, bc, nwarps = _tile(4 * C)
            _merge_norm_kernel[(triton.cdiv(T, bt),)](x, nrm.weight, nrm.bias, out, T, H, W, C, nrm.eps,
                                                      BLOCK_T=bt, BLOCK_C=bc, num_warps=nwarps)
        else:
            # [x0, x1, x2, x3] of the task = index (w parity, h parity) of each 2x2 cell: one reshape copy
            t = x.reshape(B, H // 2, 2, W // 2, 2, C).permute(0, 1, 3, 4, 2, 5).reshape(B, L // 4, 4 * C)
            out = F.layer_norm(t, (4 * C,), nrm.weight, nrm.bias, nrm.eps)
        return F.linear(out, self.reduction.weight)


class PatchEmbed(SwinPatchEmbed):
    """The task's patch embedding; its norm fused with the read of the convolution's (B, C, L) output."""

    def forward(self, x):
        y = self.proj(x).flatten(2)  # (B, C, L)
        B, C, L = y.shape
        nrm = self.norm
        if nrm is None:
            return y.transpose(1, 2).contiguous()
        if _fast(y):
            y = y.contiguous()
            out = torch.empty(B, L, C, device=y.device, dtype=y.dtype)
            bt, bc, nwarps = _tile(C)
            _embed_norm_kernel[(triton.cdiv(B * L, bt),)](y, nrm.weight, nrm.bias, out, B * L, L, C, nrm.eps,
                                                          BLOCK_T=bt, BLOCK_C=bc, num_warps=nwarps)
            return out
        return F.layer_norm(y.transpose(1, 2), (C,), nrm.weight, nrm.bias, nrm.eps).contiguous()


class ModelNew(nn.Module):
    def __init__(self, img_size=224, patch_size=4, in_chans=3, num_classes=1000,
                 embed_dim=96, depths=(2, 2, 6, 2), num_heads=(3, 6, 12, 24),
                 window_size=7, mlp_ratio=4., drop_rate=0., drop_path_rate=0.1,
                 norm_layer=nn.LayerNorm, patch_norm=True,
                 use_checkpoint=False, **kwargs):
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
                SwinMLPBlock,
                dim=int(embed_dim * 2 ** i), input_resolution=(pr[0] // (2 ** i), pr[1] // (2 ** i)),
                depth=depths[i], num_heads=num_heads[i], window_size=window_size, mlp_ratio=self.mlp_ratio,
                drop=drop_rate, drop_path=dpr[sum(depths[:i]):sum(depths[:i + 1])], norm_layer=norm_layer,
                downsample=PatchMerging if (i < self.num_layers - 1) else None, use_checkpoint=use_checkpoint))
        self.norm = norm_layer(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()
        self._graph = CUDAGraphForward(self._forward)

    def forward(self, x):
        return self._graph(x)

    def _forward(self, x):
        """The first version's forward: device work only (no host syncs; shapes fixed by the input's)."""
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        B, L, C = x.shape
        nrm = self.norm
        if _fast(x):
            x = x.contiguous()
            pooled = torch.empty(B, C, device=x.device, dtype=x.dtype)
            bc = triton.next_power_of_2(C)
            _norm_mean_kernel[(B,)](x, nrm.weight, nrm.bias, pooled, L, C, nrm.eps,
                                    BLOCK_T=max(1, 8192 // bc), BLOCK_C=bc, num_warps=8)
        else:
            pooled = F.layer_norm(x, (C,), nrm.weight, nrm.bias, nrm.eps).mean(dim=1)
        return self.head(pooled)
