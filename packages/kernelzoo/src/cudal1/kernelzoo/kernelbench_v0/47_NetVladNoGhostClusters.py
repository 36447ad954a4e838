"""KernelBench level 3, 47_NetVladNoGhostClusters, second version: the first version's single Triton kernel
launched through a CUDA graph.

Task: x (32, 100, 512) fp32 -> (32, 16384); NetVLAD with 32 clusters and no ghost clusters: assignment =
BatchNorm1d(x @ clusters) softmaxed over the clusters; vlad = assignment^T @ x minus a_sum * clusters2,
L2-normalised per cluster, flattened and L2-normalised again. Eval mode: the batch norm is the affine map of its
running statistics.

The kernel is the first version's (``cudal1.kernelzoo.blocks.netvlad``): one Triton program per batch row does
the whole layer (fp32 FMA products with ``input_precision="ieee"``). That version's time was mostly host time,
not GPU work: the Triton launch from Python (argument binding and specialisation checks on 13 arguments) plus the
output allocation and ``contiguous`` calls. Here ``_forward`` is captured once
(``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``) and each call is the 6.5 MB input copy, the replay and
the 2 MB output clone: three cheap PyTorch-side launches for one Triton launch and its Python glue, and a
little more GPU time for the two copies. The batch norm sits between the product and the softmax, so
there is no convolution to fold it into (it is already applied in registers).
Expected: about even with the first version, at best slightly better; this one is worth measuring only as a
check of the graph overhead on a one-kernel task.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
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
