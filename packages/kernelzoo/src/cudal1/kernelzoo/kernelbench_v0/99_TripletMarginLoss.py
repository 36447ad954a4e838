"""KernelBench level 1, 99_TripletMarginLoss (anchor, positive, negative: (128, 4096) fp32, nn.TripletMarginLoss
(margin, p=2, eps=1e-6, mean reduction) -> scalar): the zoo's per-sample triplet loss (one Triton program per row,
one pass accumulating both squared distances ||a - p + eps||^2 and ||a - n + eps||^2, the hinge in registers)
followed by one mean over the 128 per-sample losses. Eager runs about ten kernels (two pairwise_distance = sub, add
eps, norm each; then sub, add margin, clamp, mean) with four (128, 4096) temporaries; at 6 MiB of input this is
launch-bound, so two launches against ten should give about 2x (the zoo op measured 3.3x eager on the built-in
per-sample task). Not yet measured on a GPU."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.triplet_margin_loss import triplet_margin_loss


class ModelNew(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)  # margin, p, eps, swap, reduction

    def forward(self, anchor, positive, negative):
        f = self.loss_fn
        if f.p != 2 or f.reduction != "mean" or anchor.dim() != 2:  # not this task's module; torch's semantics
            return f(anchor, positive, negative)
        return triplet_margin_loss(anchor, positive, negative, f.margin, f.eps, f.swap).mean()
