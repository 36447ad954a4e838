"""Linear layer, GroupNorm over feature groups, then hardtanh clipping to [-1, 1].

x is float32 (BATCH, IN_FEATURES), standard-normal. The linear layer has no bias (the norm
would largely cancel it); GroupNorm has learnable affine parameters."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 2048
OUT_FEATURES = 4096
GROUPS = 32


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.norm = nn.GroupNorm(groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(self.norm(self.linear(x)), -1.0, 1.0)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, GROUPS]
