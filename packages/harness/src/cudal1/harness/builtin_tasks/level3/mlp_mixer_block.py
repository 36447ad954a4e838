"""MLP-Mixer block: token-mixing MLP across patches, then channel-mixing MLP.

Each MLP is pre-norm (LayerNorm over channels), uses GELU and has a residual connection.

x is float32 (BATCH, TOKENS, CHANNELS), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
TOKENS = 196
CHANNELS = 512
TOKEN_HIDDEN = 256
CHANNEL_HIDDEN = 2048


class Model(nn.Module):
    def __init__(self, tokens: int, channels: int, token_hidden: int, channel_hidden: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(channels)
        self.token_fc1 = nn.Linear(tokens, token_hidden)
        self.token_fc2 = nn.Linear(token_hidden, tokens)
        self.norm2 = nn.LayerNorm(channels)
        self.channel_fc1 = nn.Linear(channels, channel_hidden)
        self.channel_fc2 = nn.Linear(channel_hidden, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x).transpose(1, 2)
        y = self.token_fc2(F.gelu(self.token_fc1(y))).transpose(1, 2)
        x = x + y
        return x + self.channel_fc2(F.gelu(self.channel_fc1(self.norm2(x))))


def get_inputs():
    return [torch.randn(BATCH, TOKENS, CHANNELS)]


def get_init_inputs():
    return [TOKENS, CHANNELS, TOKEN_HIDDEN, CHANNEL_HIDDEN]
