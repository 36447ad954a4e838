"""KernelBench level 3, 13_DenseNet121TransitionLayer (x: (10, 32, 224, 224) fp32, 64 MB; BatchNorm, ReLU, 1x1
conv 32 -> 64 without bias, 2x2 average pool -> (10, 64, 112, 112)). The harness evaluates both models in eval
mode, so the batch norm is the per-channel affine map of its running statistics (the fallback path uses
``F.batch_norm(training=False)`` too).

The 1x1 convolution (no bias) acts on each pixel linearly and the 2x2 average is linear over pixels, so they
commute exactly: conv(avg(v)) = avg(conv(v)) for every input and weight. Here ONE Triton kernel applies batch
norm + ReLU + the 2x2 average (reads 64 MB, writes 16 MB) and cuDNN fp32 (no TF32) runs the 1x1 conv on the 4x
smaller pooled tensor (4x fewer FLOPs, writes the 32 MB output directly). Eager writes and re-reads the 64 MB
normalised tensor twice, writes a 128 MB conv output and reads it again for the pool: ~0.6 GB against ~0.13 GB.
Expected: ~3-4x (eager reference 0.45 ms on an H100). The block lives in ``cudal1.kernelzoo.blocks.densenet``
(the DenseNet-121/201 solutions use it too).
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 3.08x, 95% CI [2.84, 3.32] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
"""

from cudal1.kernelzoo.blocks.densenet import TransitionLayer


class ModelNew(TransitionLayer):
    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__(num_input_features, num_output_features)
