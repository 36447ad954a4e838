"""Multi-layer perceptron: Linear -> ReLU, repeated, then a final Linear.

in_features -> hidden -> ... -> hidden -> out_features with DEPTH linear layers in total.
x is float32 (BATCH, IN_FEATURES), standard-normal."""

import torch
import torch.nn as nn

BATCH = 2048
IN_FEATURES = 2048
HIDDEN = 4096
OUT_FEATURES = 1024
DEPTH = 3


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, depth: int):
        super().__init__()
        layers = [nn.Linear(in_features, hidden), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
        layers.append(nn.Linear(hidden, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES, DEPTH]
