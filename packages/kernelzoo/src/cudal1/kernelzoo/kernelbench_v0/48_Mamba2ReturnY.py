"""KernelBench level 3, 48_Mamba2ReturnY (X: (16, 128, 8, 64) fp32 = (batch, length, heads, d_head); parameters
A: (16, 128, 8), B and C: (16, 128, 8, 16) with d_state 16; chunks of 64 -> Y: (16, 128, 8, 64)), the SSD
(Mamba-2 state space dual) chunked scan: intra-chunk output through the decay matrix L = exp(segsum(A)), chunk end
states, the inter-chunk recurrence, and the states' contribution to each chunk's output.

Every tensor is small (X is 4 MB); eager spends its time launching ~40 kernels (rearranges, cumsums, masks,
exps and four ``einsum`` contractions, one of them of four operands), each paying its host launch cost. Here

* the whole forward is ONE CUDA graph (``cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward``): per call one
  input copy, one graph launch and one output clone of host time;
* inside it every contraction is written as batched matmuls over (batch, chunk, head) in the order of the math:
  Y_diag = ((C B^T) * L) X, chunk states = (X * decay)^T B, the recurrence one (c+1) x (c+1) decay matmul, Y_off
  = (C S^T) * exp(cumsum A): the same sums as the task's einsums (fp32, rounding-order differences only), with the
  reshapes done as plain views/permutes (no einops), segsum computed once for the chunks.
  The scan and this module are :class:`cudal1.kernelzoo.blocks.mamba2_ssd.Mamba2SSD`.

The graph runs ~25 small kernels.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

from cudal1.kernelzoo.blocks.mamba2_ssd import Mamba2SSD


class ModelNew(Mamba2SSD):
    """The task's module; forward returns Y (batch, length, heads, d_head)."""

    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__(batch_size, seq_length, n_heads, d_head, d_state, block_len, want_y=True)
