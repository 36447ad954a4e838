"""Transformer input embedding: token embedding + learned position embedding, then LayerNorm.

token_ids are int64 (BATCH, SEQ) in [0, VOCAB); output is float32 (BATCH, SEQ, DIM)."""

import torch
import torch.nn as nn

BATCH = 64
SEQ = 2048
VOCAB = 32000
DIM = 2048


class Model(nn.Module):
    def __init__(self, vocab: int, max_seq: int, dim: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(max_seq, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(token_ids.shape[1], device=token_ids.device)
        return self.norm(self.tokens(token_ids) + self.positions(positions))


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ))]


def get_init_inputs():
    return [VOCAB, SEQ, DIM]
