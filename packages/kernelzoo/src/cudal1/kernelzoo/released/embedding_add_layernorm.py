"""Released solution for built-in task `embedding_add_layernorm`: token gather + position add + layer norm
in one Triton pass (gathered rows read once, output written once)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.embedding_layer_norm import embedding_layer_norm


class ModelNew(nn.Module):
    def __init__(self, vocab: int, max_seq: int, dim: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(max_seq, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        return embedding_layer_norm(token_ids, self.tokens.weight, self.positions.weight, self.norm.weight,
                                    self.norm.bias, self.norm.eps)
