"""KernelBench level 2, 91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid (x: (128, 32, 16, 16) fp32;
ConvTranspose2d(32 -> 64, k=4, stride 2, padding 1, output_padding 1) -> (128, 64, 33, 33), 36 MB; softmax over
the channels; ``+ bias`` (64, 1, 1); ``* 2.0``; sigmoid).

Eager runs cuDNN's transposed convolution, a channel softmax (strided over 64 planes) and three elementwise
kernels, each reading and writing the 36 MB output. The convolution is small (1.1 GFMA: each output receives 2 x 2
of the 4 x 4 taps per input channel), so here ONE Triton kernel computes it directly: a program owns 128 positions
of one (oh, ow) parity class flattened over (sample, row, column) and visits only the taps of that parity, all 64
output channels at once as an outer product in fp32 registers (FMA, no TF32; channels-first tile, 128 registers
and an 8-byte spill in ptxas for sm_90a). The whole channel vector of each position is then in registers, so the
softmax, bias, scale and sigmoid are applied there before the only write of the output. Traffic drops from about
0.4 GB to the 36 MB output plus the 4 MB input, and six launches become one. Expected: several x faster than eager
(reference 0.74 ms on an H100). Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
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
def _convt_softmax_bias_scale_sigmoid_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, y_ptr, scale, total, H_in, W_in,
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
    bias = tl.load(b_ptr + co)
    for ph in tl.static_range(2):
        for pw in tl.static_range(2):
            if par == ph * 2 + pw:
                oh = 2 * jh + ph
                ow = 2 * jw + pw
                pm = (q < total) & (oh < H_out) & (ow < W_out)
                acc = _convt2d_s2_tile(x_ptr, w_ptr, n, jh, jw, pm, H_in, W_in, CIN, ph, pw, PAD, K, COUT, BLOCK_P)
                v = acc + cb[:, None]
                e = tl.exp(v - tl.max(v, 0)[None, :])
                v = (e / tl.sum(e, 0)[None, :] + bias[:, None]) * scale
                v = 1.0 / (1.0 + tl.exp(-v))
                out = (n.to(tl.int64)[None, :] * COUT + co[:, None]) * (H_out * W_out) + (oh * W_out + ow)[None, :]
                tl.store(y_ptr + out, v, mask=pm[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape,
                 scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        cout = ct.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.stride == (2, 2)
                and ct.kernel_size[0] == ct.kernel_size[1] and ct.padding[0] == ct.padding[1]
                and ct.dilation == (1, 1) and ct.groups == 1 and ct.bias is not None
                and ct.output_padding[0] == ct.output_padding[1] and cout & (cout - 1) == 0 and cout <= 64
                and tuple(self.bias.shape) == (cout, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = torch.softmax(self.conv_transpose(x), dim=1)
            return torch.sigmoid((y + self.bias) * self.scaling_factor)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, h, w = x.shape
        cout, k, pad, op = ct.out_channels, ct.kernel_size[0], ct.padding[0], ct.output_padding[0]
        ho, wo = (h - 1) * 2 - 2 * pad + k + op, (w - 1) * 2 - 2 * pad + k + op
        jh, jw = (ho + 1) // 2, (wo + 1) // 2
        total = n * jh * jw
        y = torch.empty(n, cout, ho, wo, device=x.device, dtype=x.dtype)
        block = 128
        grid = (triton.cdiv(total, block), 4)
        _convt_softmax_bias_scale_sigmoid_kernel[grid](x, ct.weight.contiguous(), ct.bias,
                                                       self.bias.reshape(-1).contiguous(), y,
                                                       float(self.scaling_factor), total, h, w, ho, wo, jh, jw,
                                                       cin, PAD=pad, K=k, COUT=cout, BLOCK_P=block,
                                                       num_warps=8)
        return y
