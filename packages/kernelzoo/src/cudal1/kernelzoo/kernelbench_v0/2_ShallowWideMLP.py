"""KernelBench level 3, 2_ShallowWideMLP (x: (1, 1000) fp32; Linear 1000 -> 2000, ReLU,
Linear 2000 -> 2000, ReLU, Linear 2000 -> 10 -> (1, 10)).

Launch-bound: a batch of one row is three matrix-vector products on 24 MB of weights (the 2000 x 2000 one, 16 MB,
is ~6 us at HBM rate), while eager pays host launch overhead for 5 kernels (3 linears, 2 ReLUs; ~8 on the GPU with
addmm's bias copies) on every call. Here each layer is ONE Triton matrix-vector kernel with the bias and ReLU fused
(a program takes 8 output features of one row and runs over the inputs in 512-wide chunks of fp32 multiply-adds;
250 programs read the 2000 x 2000 weight once), and the three kernels are captured once as a CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`), so a call is one input copy, one graph launch and
one output copy. The weights are read from the live parameters on every replay (nothing is cached). More than 16
rows and CPU tensors use ``torch.addmm`` + ReLU. All fp32, no reduced precision; the sums are ordered differently
from cuBLAS (within fp32 rounding). The kernel and the layer stack are
:class:`cudal1.kernelzoo.blocks.small_mlp.MatVecMLP`.
Eager reference 0.128 ms on an H100; expected ~0.05-0.06 ms (~2-2.5x): ~15 us of GPU work plus three launches
and the harness's synchronisation.
Measured on an H100 (2026-11-26, sandboxed harness, eager baseline, after the shared code moved into a block):
2.15x, 95% CI [2.08, 2.18] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

from cudal1.kernelzoo.blocks.small_mlp import MatVecMLP


class ModelNew(MatVecMLP):
    """The task's layout: ``(input_size, hidden_layer_sizes, output_size)``."""

    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__(input_size, hidden_layer_sizes, output_size)
