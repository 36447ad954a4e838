"""KernelBench level 3, 25_ShuffleNetUnit (x: (10, 240, 224, 224) fp32, 482 MB; grouped 1x1 conv 240 -> 120
(groups 3), BatchNorm, ReLU; depthwise 3x3 conv, BatchNorm; channel shuffle (groups 3); grouped 1x1 conv
120 -> 480, BatchNorm, ReLU; plus the shortcut 1x1 conv 240 -> 480 + BatchNorm (identity when the channel counts
match); output (10, 480, 224, 224), 963 MB). The harness evaluates both models in eval mode, so every batch norm
is the per-channel affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)``).

Eager makes a separate full pass for every elementwise step: on the 480-channel tensors alone batch norm 3, ReLU,
the shortcut batch norm and the in-place add read and write about 8.7 GB. Here the convolutions stay cuDNN fp32
(no TF32) and everything between them is fused into three Triton kernels (``cudal1.kernelzoo.blocks.shufflenet``, shared with 26_ShuffleNet): batch norm 1 + ReLU (one pass);
batch norm 2 + the channel shuffle (each program writes its normalised plane straight to its shuffled channel,
replacing eager's batch norm pass and transpose copy); and relu(bn3(a)) + bn_s(b) in ONE pass (two reads, one
write: 2.9 GB instead of ~8.7 GB). Expected: ~1.3x (eager reference 10.2 ms on an H100; about 6.5 GB of ~13 GB
of eager memory traffic removed).
Measured 1.35x [1.35, 1.36] on an H100 when these kernels were in this file (2026-11-25, call 1 of the
session's level-3 run; the move changed no kernel).

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 1.35x, 95% CI [1.35, 1.37] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
"""

from cudal1.kernelzoo.blocks.shufflenet import ShuffleNetUnit


class ModelNew(ShuffleNetUnit):
    """The unit with the task's parameter names and ``(in_channels, out_channels, groups=3)`` signature."""
