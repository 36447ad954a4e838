"""KernelBench level 1, 81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__ (x: (16,
32, 64, 128) fp32; ConvTranspose2d(32 -> 64, k=3, stride 5, padding 1, dilation 2, no bias) -> (16, 64, 318, 638)).

With stride 5 and dilation 2 the 3 taps of a dimension land on 3 distinct residues mod 5 (each output position
takes at most one tap per dimension): 9 of the 25 (oh, ow) residue classes are a 1x1 convolution (32 -> 64
channels) of the input, the other 16 are exactly zero. cuDNN is slow here. Here one CUDA C
kernel writes whole output rows: a lane owns 5 consecutive positions (one per residue, their taps compiled in),
a warp 8 output channels, every warp of a row reads the same broadcast weights, and the stores go through shared
memory so that each is 32 consecutive floats; the 831 MB output, mostly zeros, is written once.
:func:`cudal1.kernelzoo.blocks.convt_disjoint_cuda.conv_transpose2d` (PyTorch's function on CPU).
A block computes 8 rows of one residue class mod 5 (one tap kh, its weights staged once). One row a block,
staging the weights per row, gained less; the Triton implicit GEMM of ``blocks.conv_transpose`` (one residue class
per program, stride-5 stores) was slower than eager. The output is still written well below the GPU's write rate.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.convt_disjoint_cuda import conv_transpose2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose2d(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups,
                                ct.dilation)
