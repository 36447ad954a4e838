"""KernelBench level 3, 49_Mamba2ReturnFinalState (X: (16, 128, 8, 64) fp32 = (batch, length, heads,
d_head); parameters A: (16, 128, 8), B and C: (16, 128, 8, 16) with d_state 16; chunks of 64 -> the final state
(16, 8, 64, 16)), the SSD (Mamba-2 state space dual) chunked scan up to its last inter-chunk state.

The task computes the intra-chunk output Y_diag (exp of a masked segment sum, a four-operand ``einsum``) and then
discards it: only the chunk end states and the inter-chunk recurrence reach the returned final state. Every tensor
is small (X is 4 MB); eager spends its time launching ~30 kernels, each paying its host launch cost, plus the
unused Y_diag contraction. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it only what the result depends on is computed (the dead Y_diag is skipped: it cannot change the
  output), as batched matmuls over (batch, chunk, head): chunk states = (X * decay)^T B, then only the last row
  of the (c+1) x (c+1) chunk decay matrix times the states: the same sums as the task's einsums (fp32,
  rounding-order differences only), reshapes as plain views/permutes (no einops). The scan and this module are
  :class:`cudal1.kernelzoo.blocks.mamba2_ssd.Mamba2SSD`.

The graph runs ~15 small kernels.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

from cudal1.kernelzoo.blocks.mamba2_ssd import Mamba2SSD


class ModelNew(Mamba2SSD):
    """The task's module; forward returns the final state (batch, heads, d_head, d_state)."""

    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__(batch_size, seq_length, n_heads, d_head, d_state, block_len, want_y=False)
