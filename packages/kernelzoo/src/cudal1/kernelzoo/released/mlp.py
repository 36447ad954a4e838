"""Released solution for built-in task `mlp`: each hidden Linear + ReLU is a cuBLAS fp32 GEMM without bias and
one fused Triton epilogue (bias + ReLU) in place on its output; the last Linear is addmm (bias in the GEMM)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.bias_act import bias_act_


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, depth: int):
        super().__init__()
        layers = [nn.Linear(in_features, hidden), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
        layers.append(nn.Linear(hidden, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mods = list(self.net)
        h = x
        for i, m in enumerate(mods):
            if not isinstance(m, nn.Linear):
                continue
            if i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU):
                h = bias_act_(torch.matmul(h, m.weight.t()), bias=m.bias, activation="relu")
            else:
                h = torch.addmm(m.bias, h, m.weight.t())
        return h
