"""KernelBench level 2, 93_ConvTranspose2d_Add_Min_GELU_Multiply (x: (128, 32, 32, 32) fp32;
ConvTranspose2d(32 -> 16, k=4, stride 2) -> (128, 16, 66, 66), 36 MB; ``+ 0.5``; ``min(., 0)``; exact GELU;
``* 2.0``).

Eager runs cuDNN's transposed convolution and then four
elementwise kernels, each reading and writing the 36 MB output. The convolution is small (1.1 GFMA: each output
receives 2 x 2 of the 4 x 4 taps per input channel), so here ONE Triton kernel computes it directly: a program
owns 256 positions of one (oh, ow) parity class flattened over (sample, row, column) and visits only the taps of
that parity (4 per input channel), all 16 output channels at once as an outer product in fp32 registers (FMA, no
TF32; channels-first tile, 118 registers and no spills in ptxas for sm_90a); bias, add, min, GELU and scale are
applied before the only write of the output. Traffic drops from about 0.3 GB to the 36 MB output plus the 17 MB
input, and five launches become one. Expected: several x faster than eager (reference 0.66 ms on an H100). Not yet
measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _convt2d_s2_tile(x_ptr, w_ptr, n, jh, jw, pmask, H_in, W_in, CIN, PH: tl.constexpr, PW: tl.constexpr,
                     PAD: tl.constexpr, K: tl.constexpr, COUT: tl.constexpr, BLOCK_P: tl.constexpr):
    """Transposed conv (stride 2) outputs at (oh, ow) = (2 jh + PH, 2 jw + PW) for every output channel: a
    (COUT, BLOCK_P) fp32 tile (channels first: each thread holds a few positions, so the position
    indices are not replicated across threads), bias not added. Only the taps with matching parity are visited."""
    co = tl.arange(0, COUT)
    acc = tl.zeros([COUT, BLOCK_P], tl.float32)
    for kh in tl.static_range(K):
        if (PH + PAD - kh) % 2 == 0:
            ih = jh + (PH + PAD - kh) // 2
            for kw in tl.static_range(K):
                if (PW + PAD - kw) % 2 == 0:
                    iw = jw + (PW + PAD - kw) // 2
                    m = pmask & (ih >= 0) & (ih < H_in) & (iw >= 0) & (iw < W_in)
                    for ci in range(CIN):
                        xv = tl.load(x_ptr + ((n * CIN + ci) * H_in + ih) * W_in + iw, mask=m, other=0.0)
                        wv = tl.load(w_ptr + (ci * COUT + co) * (K * K) + (kh * K + kw))
                        acc += wv[:, None] * xv[None, :]
    return acc


@triton.jit
def _convt_add_min_gelu_mul_kernel(x_ptr, w_ptr, cb_ptr, y_ptr, add_value, mul_value, total, H_in, W_in,
                                   H_out, W_out, JH, JW, CIN, PAD: tl.constexpr, K: tl.constexpr,
                                   COUT: tl.constexpr, BLOCK_P: tl.constexpr):
    par = tl.program_id(1)  # parity class: ph = par // 2, pw = par % 2
    q = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    n = q // (JH * JW)
    r = q % (JH * JW)
    jh = r // JW
    jw = r % JW
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    for ph in tl.static_range(2):
        for pw in tl.static_range(2):
            if par == ph * 2 + pw:
                oh = 2 * jh + ph
                ow = 2 * jw + pw
                pm = (q < total) & (oh < H_out) & (ow < W_out)
                acc = _convt2d_s2_tile(x_ptr, w_ptr, n, jh, jw, pm, H_in, W_in, CIN, ph, pw, PAD, K, COUT, BLOCK_P)
                v = tl.minimum(acc + cb[:, None] + add_value, 0.0)
                v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)) * mul_value
                out = (n.to(tl.int64)[None, :] * COUT + co[:, None]) * (H_out * W_out) + (oh * W_out + ow)[None, :]
                tl.store(y_ptr + out, v, mask=pm[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, add_value, multiply_value):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.add_value = add_value
        self.multiply_value = multiply_value

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        cout = ct.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.stride == (2, 2)
                and ct.kernel_size[0] == ct.kernel_size[1] and ct.padding[0] == ct.padding[1]
                and ct.dilation == (1, 1) and ct.groups == 1 and ct.output_padding == (0, 0)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = torch.clamp(self.conv_transpose(x) + self.add_value, max=0.0)
            return F.gelu(y) * self.multiply_value
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, h, w = x.shape
        cout, k, pad = ct.out_channels, ct.kernel_size[0], ct.padding[0]
        ho, wo = (h - 1) * 2 - 2 * pad + k, (w - 1) * 2 - 2 * pad + k
        jh, jw = (ho + 1) // 2, (wo + 1) // 2
        total = n * jh * jw
        y = torch.empty(n, cout, ho, wo, device=x.device, dtype=x.dtype)
        block = 256
        grid = (triton.cdiv(total, block), 4)
        _convt_add_min_gelu_mul_kernel[grid](x, ct.weight.contiguous(), ct.bias, y, float(self.add_value),
                                             float(self.multiply_value), total, h, w, ho, wo, jh, jw, cin,
                                             PAD=pad, K=k, COUT=cout, BLOCK_P=block, num_warps=4)
        return y
