"""KernelBench level 3, 47_NetVladNoGhostClusters, second version: the first version's single Triton kernel
launched through a CUDA graph.

Task: x (32, 100, 512) fp32 -> (32, 16384); NetVLAD with 32 clusters and no ghost clusters: assignment =
BatchNorm1d(x @ clusters) softmaxed over the clusters; vlad = assignment^T @ x minus a_sum * clusters2,
L2-normalised per cluster, flattened and L2-normalised again. Eval mode: the batch norm is the affine map of its
running statistics.

The kernel is the first version's (``cudal1.kernelzoo.blocks.netvlad``): one Triton program per batch row does
the whole layer (fp32 FMA products with ``input_precision="ieee"``). That version measured 3.82x over eager
(0.475 ms on an H100, so ~0.124 ms) for about 30-60 us of GPU work: the rest is host time, mostly the Triton
launch from Python (13-20 us: argument binding and specialisation checks on 13 arguments) plus the output
allocation and ``contiguous`` calls. Here ``_forward`` is captured once
(``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``) and each call is the 6.5 MB input copy, the replay and
the 2 MB output clone: three cheap PyTorch-side launches (~5-8 us each) for one Triton launch and its Python
glue, and ~5 us more GPU time for the two copies. The batch norm sits between the product and the softmax, so
there is no convolution to fold it into (it is already applied in registers).
Expected: about even with the first version, at best ~10-15% better (~4-4.3x over eager, 0.475 ms); this one is
worth measuring only as a check of the graph overhead on a one-kernel task. Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 4.71x, 95% CI [4.57, 4.81] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.netvlad import NetVLAD


class ModelNew(NetVLAD):
    """The layer as the task builds it: ``(cluster_size, feature_size, ghost_clusters)``."""

    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__(cluster_size, feature_size, ghost_clusters)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        """The first version's forward (one Triton kernel on CUDA; no host syncs)."""
        return NetVLAD.forward(self, x)

    def forward(self, x, mask=None):
        return self._graph(x)
