"""KernelBench level 3, 16_DenseNet201, second version: the first version's forward replayed as ONE CUDA graph.

Task: x (10, 3, 224, 224) fp32 -> (10, 10); DenseNet-201: 7x7 stem conv, batch norm, ReLU, max pool; dense blocks
of 6/12/48/32 layers (BatchNorm-ReLU-Conv3x3, growth 32, each layer's input the concatenation of all earlier
features) at 56/28/14/7 pixels a side; transition layers BatchNorm-ReLU-Conv1x1-AvgPool2d(2); final batch norm,
ReLU, global average pool, Linear. Eval mode: every batch norm is the affine map of its running statistics.

The kernels are the first version's (``cudal1.kernelzoo.blocks.densenet``): one preallocated feature buffer per
dense block (no re-concatenation), batch norm + ReLU as one Triton pass over a layer's channel prefix, the
transition's batch norm + ReLU + 2x2 average as one pass before its 1x1 conv (they commute), cuDNN fp32
convolutions. That version was barely faster than eager: its ~100 dense layers each cost about four host launches
(a Triton launch, the conv, the slice copy, views), and blocks 3 and 4 (48 + 32 layers at 14x14 and 7x7,
batch 10) have little GPU work per kernel, so the host paces the GPU there. Here ``_forward`` is captured once
into a CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``) and each call is three launches: the
6 MB input copy, the graph replay, the (10, 10) output clone. No batch norm is folded into a convolution: every
batch norm here precedes a ReLU that precedes its convolution, and the stem's batch norm precedes a ReLU and a
max pool, so a fold would only move the same pass into a separate bias add.
A call should then take about the GPU time of the kernels (the 3x3 convolutions of blocks 1-2 and the memory
passes), with the host launch time gone.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.densenet import DenseNet


class ModelNew(DenseNet):
    def __init__(self, growth_rate: int = 32, num_classes: int = 1000):
        super().__init__([6, 12, 48, 32], growth_rate, num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        """The first version's forward (device work only: no host syncs, shapes fixed by the input's)."""
        return DenseNet.forward(self, x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
