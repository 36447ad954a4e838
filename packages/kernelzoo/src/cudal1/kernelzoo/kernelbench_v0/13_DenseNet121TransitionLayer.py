"""KernelBench level 3, 13_DenseNet121TransitionLayer (x: (10, 32, 224, 224) fp32, 64 MB; BatchNorm, ReLU, 1x1
conv 32 -> 64 without bias, 2x2 average pool -> (10, 64, 112, 112)). The harness evaluates both models in eval
mode, so the batch norm is the per-channel affine map of its running statistics (the fallback path uses
``F.batch_norm(training=False)`` too).

The 1x1 convolution (no bias) acts on each pixel linearly and the 2x2 average is linear over pixels, so they commute
exactly: conv(avg(v)) = avg(conv(v)) for every input and weight. Here ONE Triton kernel applies batch norm + ReLU +
the 2x2 average (reads 64 MB, writes 16 MB) and cuDNN fp32 (no TF32) runs the 1x1 conv on the quarter-size pooled
tensor (a quarter of the FLOPs, writes the 32 MB output directly). Eager writes and re-reads the 64 MB normalised
tensor twice, writes a 128 MB conv output and reads it again for the pool: ~0.6 GB against ~0.13 GB. The block lives
in ``cudal1.kernelzoo.blocks.densenet`` (the DenseNet-121/201 solutions use it too).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

from cudal1.kernelzoo.blocks.densenet import TransitionLayer


class ModelNew(TransitionLayer):
    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__(num_input_features, num_output_features)
