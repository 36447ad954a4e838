"""KernelBench level 3, 46_NetVladWithGhostClusters (x: (32, 100, 512) fp32; NetVLAD with 32 clusters and 16
ghost clusters: assignment = BatchNorm1d(x @ clusters) softmaxed over the 48 clusters, the 16 ghost columns
dropped; vlad = assignment^T @ x minus a_sum * clusters2, L2-normalised over the features per cluster, flattened
to (32, 16384) and L2-normalised again). The harness evaluates both in eval mode, so the batch norm is the
per-cluster affine map of its running statistics.

Launch-bound: eager runs about 16 kernels (matmul, batch norm, softmax, sum, mul, bmm, sub, two normalisations of
several kernels each, a transpose copy) on under 7 MB of data, mostly host launch overhead.
The one-Triton-program-per-row kernel of ``blocks.netvlad`` (used by 47) was much slower than eager here: 32 programs
doing fp32 FMA matmuls leave most of the GPU idle. So this file keeps cuBLAS and the library kernels (the layer's
PyTorch formulation, :meth:`cudal1.kernelzoo.blocks.netvlad.NetVLAD._torch`: ``x @ clusters`` as one matmul,
eval batch norm from the running statistics, softmax, ghost columns sliced off, the bmm, both normalisations;
all fp32) and captures it once as a CUDA graph (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`):
a call is one input copy, one graph launch and one output copy instead of ~16 launches; the parameters and
running statistics are read live on every replay.
What remains: ~16 small kernels back to back inside the graph plus three launches.

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
        self._graph = CUDAGraphForward(self._torch)

    def forward(self, x: torch.Tensor, mask=None) -> torch.Tensor:
        return self._graph(x)
