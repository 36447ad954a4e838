"""KernelBench level 3, 20_MobileNetV2 (x: (10, 3, 224, 224) fp32; MobileNetV2: stem conv + BatchNorm + ReLU6,
17 inverted-residual blocks (1x1 expand conv + BatchNorm + ReLU6, depthwise 3x3 conv + BatchNorm + ReLU6, 1x1
project conv + BatchNorm; the task builds them without the residual add), 1x1 conv to 1280 + BatchNorm + ReLU6,
global average pool, Linear -> (10, 1000)). The harness evaluates both models in eval mode, so every batch norm is
the per-channel affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)``).

Eager runs each batch norm and each ReLU6 as its own full pass (52 batch norms, 35 ReLU6). Here the convolutions
stay cuDNN fp32 (no TF32) and every batch norm together with the ReLU6 after it is ONE Triton pass (one read,
one write), 35 launches and 35 read/write passes fewer; the final pool is a mean over the 7x7 plane.
Expected: ~1.1-1.2x (eager reference 7.4 ms on an H100).
Not yet measured on a GPU.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import bn_act


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()

        def _make_divisible(v, divisor, min_value=None):
            if min_value is None:
                min_value = divisor
            new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
            # Make sure that round down does not go down by more than 10%.
            if new_v < 0.9 * v:
                new_v += divisor
            return new_v

        def _inverted_residual_block(inp, oup, stride, expand_ratio):
            hidden_dim = int(inp * expand_ratio)
            use_res_connect = stride == 1 and inp == oup

            layers = []
            if expand_ratio != 1:
                # Pointwise convolution
                layers.append(nn.Conv2d(inp, hidden_dim, 1, 1, 0, bias=False))
                layers.append(nn.BatchNorm2d(hidden_dim))
                layers.append(nn.ReLU6(inplace=True))

            layers.extend([
                # Depthwise convolution
                nn.Conv2d(hidden_dim, hidden_dim, 3, stride, 1, groups=hidden_dim, bias=False),
                nn.BatchNorm2d(hidden_dim),
                nn.ReLU6(inplace=True),
                # Pointwise linear convolution
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ])

            if use_res_connect:
                return nn.Sequential(*layers), True
            else:
                return nn.Sequential(*layers), False

        # MobileNetV2 architecture
        input_channel = 32
        last_channel = 1280
        inverted_residual_setting = [
            # t, c, n, s
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]

        # Building first layer
        features = [nn.Conv2d(3, input_channel, 3, 2, 1, bias=False),
                    nn.BatchNorm2d(input_channel),
                    nn.ReLU6(inplace=True)]

        # Building inverted residual blocks
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c, 8)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(_inverted_residual_block(input_channel, output_channel, stride, expand_ratio=t)[0])
                input_channel = output_channel

        # Building last several layers
        features.append(nn.Conv2d(input_channel, last_channel, 1, 1, 0, bias=False))
        features.append(nn.BatchNorm2d(last_channel))
        features.append(nn.ReLU6(inplace=True))

        # Final layer
        features.append(nn.AdaptiveAvgPool2d((1, 1)))

        self.features = nn.Sequential(*features)

        # Linear layer
        self.classifier = nn.Sequential(
            nn.Dropout(0.0),
            nn.Linear(last_channel, num_classes),
        )

        # Weight initialization
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out')
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        leaves = [m for f in self.features for m in (f if isinstance(f, nn.Sequential) else [f])]
        i = 0
        while i < len(leaves):
            m = leaves[i]
            if isinstance(m, nn.Conv2d) and i + 1 < len(leaves) and isinstance(leaves[i + 1], nn.BatchNorm2d):
                relu6 = i + 2 < len(leaves) and isinstance(leaves[i + 2], nn.ReLU6)
                x = bn_act(m(x), leaves[i + 1], 2 if relu6 else 0)
                i += 3 if relu6 else 2
            elif isinstance(m, nn.AdaptiveAvgPool2d) and m.output_size in ((1, 1), 1):
                x = x.mean(dim=(2, 3))
                i += 1
            else:
                x = m(x)
                i += 1
        return self.classifier(x.reshape(x.size(0), -1))
