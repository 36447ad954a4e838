"""The online log-sum-exp of one row, written once for the cross-entropy kernels (per-sample backward, fused
mean/sum, fused linear CE's chunk statistics): one pass over ``n_cols`` values in column blocks, rescaling the
running sum whenever the running maximum grows, so no value is read twice and ``exp`` never overflows."""

from __future__ import annotations

from .._triton import tl, triton


@triton.jit
def row_lse_parts(ptr, base, n_cols, WITH_SUM: tl.constexpr, BLOCK: tl.constexpr):
    """``(m, s, total)`` of the row ``ptr[base : base + n_cols]`` in fp32: its maximum, the sum of ``exp(x - m)``
    (so ``logsumexp = m + log(s)``; ``m = -inf``, ``s = 0`` for a row of ``-inf``), and the sum of its values
    (``WITH_SUM``; 0 otherwise)."""
    m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), 0)
    acc = tl.zeros([BLOCK], tl.float32)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # all -inf so far: exp(-inf - 0) = 0, no NaN
        acc = acc * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        if WITH_SUM:
            total += tl.where(mask, x, 0.0)
        m = m_new
    return m, tl.sum(acc, 0), tl.sum(total, 0)
