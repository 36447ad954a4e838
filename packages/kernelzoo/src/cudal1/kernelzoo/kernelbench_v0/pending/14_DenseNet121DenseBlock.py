"""KernelBench level 3, 14_DenseNet121DenseBlock (x: (10, 32, 224, 224) fp32; 6 layers of
BatchNorm-ReLU-Conv3x3(growth 32, no bias)-Dropout(0.0), each layer's input the torch.cat of all earlier features;
output (10, 224, 224, 224), 450 MB). The harness evaluates both models in eval mode, so every batch norm is the
per-channel affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)`` too)
and Dropout(0.0) is the identity.

Eager re-concatenates ALL earlier features after every layer (64+96+...+224 = 864 channel planes copied, about
1.7 GB written and read again) and runs batch norm and ReLU as two full passes over each layer input (four
passes over 672 channel planes in all). Here ONE preallocated output buffer holds the block: the input and each
new 32-channel feature are written once into their channel slice, and each layer reads its prefix slice directly.
Batch norm + ReLU is ONE Triton kernel (one strided read, one write; scale/shift from the running statistics
in-kernel). The 3x3 convolutions stay cuDNN fp32 (no TF32). Expected: ~1.3x (eager reference 11.2 ms on an
H100; about 3 GB of the ~8 GB of eager's non-convolution traffic removed).
Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps):
    scale = tl.load(g_ptr + c) / tl.sqrt(tl.load(rv_ptr + c) + eps)
    return scale, tl.load(b_ptr + c) - tl.load(rm_ptr + c) * scale


@triton.jit
def _bn_relu_kernel(x_ptr, y_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, eps, C, HW, stride_n, stride_c,
                    BLOCK: tl.constexpr):
    """y[n, c] = relu(bn(x[n, c])) for one (n, c) plane block; x may be a channel slice (strided n, c)."""
    pid = tl.program_id(0)
    n, c = pid // C, pid % C
    scale, shift = _bn_scale_shift(c, rm_ptr, rv_ptr, g_ptr, b_ptr, eps)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    v = tl.load(x_ptr + n.to(tl.int64) * stride_n + c * stride_c + offs, mask=m, other=0.0)
    tl.store(y_ptr + pid.to(tl.int64) * HW + offs, tl.maximum(v * scale + shift, 0.0), mask=m)


def _fast(x: torch.Tensor, bn: nn.BatchNorm2d) -> bool:
    return (x.is_cuda and x.dtype == torch.float32 and bn.affine and bn.running_mean is not None
            and x.stride(3) == 1 and x.stride(2) == x.shape[3])


def bn_relu(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
    """relu(bn(x)) with bn's running statistics, as a new contiguous tensor (x may be a channel slice)."""
    if not _fast(x, bn):
        return F.relu(F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps))
    n, c, h, w = x.shape
    y = torch.empty((n, c, h, w), device=x.device, dtype=x.dtype)
    block = min(1024, triton.next_power_of_2(h * w))
    _bn_relu_kernel[(n * c, triton.cdiv(h * w, block))](x, y, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                                                        bn.eps, c, h * w, x.stride(0), x.stride(1), BLOCK=block,
                                                        num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(num_input_features + i * growth_rate), nn.ReLU(inplace=True),
                          nn.Conv2d(num_input_features + i * growth_rate, growth_rate, kernel_size=3, padding=1,
                                    bias=False), nn.Dropout(0.0))
            for i in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c0, h, w = x.shape
        total = c0 + sum(layer[2].out_channels for layer in self.layers)
        buf = torch.empty((n, total, h, w), device=x.device, dtype=x.dtype)
        buf[:, :c0].copy_(x)
        c = c0
        for layer in self.layers:
            bn, conv = layer[0], layer[2]
            f = F.conv2d(bn_relu(buf[:, :c], bn), conv.weight, None, 1, 1)  # Dropout(0.0) is the identity
            buf[:, c:c + f.shape[1]].copy_(f)
            c += f.shape[1]
        return buf
