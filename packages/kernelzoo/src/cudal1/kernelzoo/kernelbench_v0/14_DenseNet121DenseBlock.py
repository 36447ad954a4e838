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
in-kernel). The 3x3 convolutions stay cuDNN fp32 (no TF32). About 3 GB of the ~8 GB of eager's non-convolution
traffic is removed; the convolutions are unchanged.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

from cudal1.kernelzoo.blocks.densenet import DenseBlock


class ModelNew(DenseBlock):
    """The dense block as the task builds it: ``(num_layers, num_input_features, growth_rate)``."""
