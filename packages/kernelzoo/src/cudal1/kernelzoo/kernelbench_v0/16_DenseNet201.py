"""KernelBench level 3, 16_DenseNet201 (x: (10, 3, 224, 224) fp32; DenseNet-201: 7x7 stem conv, batch norm,
ReLU, max pool; dense blocks of 6/12/48/32 layers (BatchNorm-ReLU-Conv3x3, growth 32, each layer's input the
torch.cat of all earlier features); transition layers BatchNorm-ReLU-Conv1x1-AvgPool2d(2); final batch norm,
ReLU, global average pool, Linear -> (10, 10)). The harness evaluates both models in eval mode, so every batch
norm is the per-channel affine map of its running statistics (the fallback path uses
``F.batch_norm(training=False)`` too).

Eager spends most of its memory traffic outside the convolutions: each dense layer re-concatenates ALL earlier
features (quadratic copying over a block), and batch norm and ReLU each read and write the whole layer input.
Here each dense block owns ONE preallocated feature buffer: the block input and every new 32-channel feature
are written once into their channel slice, and a layer reads the prefix slice directly. Batch norm + ReLU is
ONE Triton kernel (one read of the strided slice, one write; scale/shift from the running stats in-kernel).
In a transition layer the 1x1 convolution (no bias) and the 2x2 average pool commute exactly (both linear,
the conv acts per pixel), so one Triton kernel applies batch norm + ReLU + the 2x2 average and cuDNN runs the
1x1 conv on a 4x smaller input. The convolutions stay cuDNN fp32 (no TF32). Expected: ~1.2-1.4x (eager
reference 27.4 ms on an H100), from the removed concatenations and the halved norm traffic.
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.
"""

from cudal1.kernelzoo.blocks.densenet import DenseNet


class ModelNew(DenseNet):
    def __init__(self, growth_rate: int = 32, num_classes: int = 1000):
        super().__init__([6, 12, 48, 32], growth_rate, num_classes)
