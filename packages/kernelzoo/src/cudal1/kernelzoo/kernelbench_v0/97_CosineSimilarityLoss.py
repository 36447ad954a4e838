"""KernelBench level 1, 97_CosineSimilarityLoss (predictions, targets: (128, 4096) fp32;
``mean(1 - cosine_similarity(p, t, dim=1))`` -> scalar): one Triton program per row accumulates the dot product
and both squared norms in one pass over the two rows and writes ``(1 - cos) / N`` with torch's formula
``cos = sum((p / max(|p|, 1e-8)) * (t / max(|t|, 1e-8)))`` (the norms clamped at eps separately, as
ATen's cosine_similarity does); one sum over the 128 row values gives the loss. Eager's cosine_similarity runs
two vector norms, two clamps, two broadcast divides (each a (128, 4096) temporary), a product and a sum, then
rsub and mean: about ten launches on 4 MB of input, so launch-bound; two launches here should give 2-3x. Not yet
measured on a GPU."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cosine_loss_rows_kernel(p_ptr, t_ptr, out_ptr, n_cols, inv_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    dot = tl.zeros([BLOCK], tl.float32)
    pp = tl.zeros([BLOCK], tl.float32)
    tt = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + base + cols, mask=mask, other=0.0)
        t = tl.load(t_ptr + base + cols, mask=mask, other=0.0)
        dot += p * t
        pp += p * p
        tt += t * t
    p_norm = tl.maximum(tl.sqrt(tl.sum(pp, 0)), 1e-8)
    t_norm = tl.maximum(tl.sqrt(tl.sum(tt, 0)), 1e-8)
    cos = tl.sum(dot, 0) / (p_norm * t_norm)
    tl.store(out_ptr + row, (1.0 - cos) * inv_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        p, t = predictions, targets
        if not (p.is_cuda and p.dtype == torch.float32 and t.dtype == torch.float32 and p.dim() == 2
                and p.shape == t.shape):
            eps = 1e-8
            cos = ((p / p.norm(dim=1, keepdim=True).clamp_min(eps)) * (t / t.norm(dim=1, keepdim=True).clamp_min(eps))
                   ).sum(1)
            return (1 - cos).mean()
        p, t = p.contiguous(), t.contiguous()
        rows, n_cols = p.shape
        out = torch.empty(rows, device=p.device, dtype=torch.float32)
        block = min(4096, triton.next_power_of_2(max(n_cols, 16)))
        _cosine_loss_rows_kernel[(rows,)](p, t, out, n_cols, 1.0 / rows, BLOCK=block, num_warps=8)
        return out.sum()
