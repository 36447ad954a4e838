"""KernelBench level 3, 34_VanillaRNNHidden (x: (8, 1024) fp32; one RNN cell step that keeps its hidden state
(8, 256) across calls: ``h = tanh(i2h(cat(x, h)))``, the state becomes ``h`` and ``h`` is returned, (8, 256); the
reference also computes ``h2o(h)`` and discards it).

Stateful: the reference draws its initial state with ``torch.randn((batch_size, hidden_size))`` as the first
thing its constructor does and replaces it with the new ``h`` on every call (the harness detects this, puts both
models back to their initial state before every compared or timed call with ``StateSnapshot``, and compares
from identical state). This model keeps the state the same way, call after call:

- ``self.hidden`` is drawn exactly as the reference draws it (same shape, same position in the constructor's
  random stream; ``batch_size`` is the task's module-level 8, which no constructor argument carries), and is a
  non-persistent buffer: not in the state dict (the harness's parameter mapping never touches it), moved by
  ``.to()``, saved and restored in place by ``StateSnapshot``;
- every call advances it once, in place (the new ``h`` is written into the same tensor), and returns a NEW tensor
  holding the new ``h``: like the reference's output, it is not written by any later call or restore.
  Returning the state tensor itself would not do: the next call (and the restore before it) would overwrite an
  output the harness still holds. (Requires the ``StateSnapshot`` of commit 01a198b, which restores a plain
  attribute the model rebound since the snapshot by rebinding it: the one before copied the initial state *into*
  the tensor the reference had returned, so the reference's kept timed outputs read the initial state, only a
  candidate that rebinds its state like the reference matched them, and this file failed ``timed_output_mismatch``.
  Checked on CPU through ``EvalPool`` with both versions.)

``h2o(h)`` is not computed: the reference discards it (it affects neither the output nor the state).

Launch-bound: the step is ~2.6 MFLOP on 1.3 MB of weights (a few microseconds of GPU work), while eager pays host
launch overhead for the concatenation, two ``addmm``s and the tanh on every call. Here the step (the same
concatenation, ``addmm`` shape and tanh as the reference, fp32) is captured once as a CUDA graph that reads the
input from a static buffer and reads AND updates ``self.hidden`` in place; a call is one input copy, one graph
launch and one copy of the new state out. The state advances only by replays (the eager warm-up before the capture
runs on a scratch copy of the state), the weights are read from the live parameters on every replay
(``load_state_dict`` copies into them in place), and the output is a fresh tensor every call (no cache). A state
tensor other than the captured one (e.g. rebound by a restore that could not copy in place) gets a graph of its own.
With gradients enabled, off CUDA or inside another capture: the same ops eagerly.
A call costs three launches plus the harness's synchronisation; the GPU work is unchanged.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8  # the task's module-level batch size: the shape of the reference's initial hidden state


class _StepGraph:
    """The RNN step captured as a CUDA graph per (input signature, state tensor): replays read the input from a
    static copy and advance the module's state tensor in place."""

    def __init__(self, model: "ModelNew") -> None:
        self.model = model
        self.graphs: dict[tuple, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}

    def _capture(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
        xs = x.clone()
        scratch = h.clone()  # warm-up (lazy cuBLAS handles and workspaces) without advancing the real state
        for _ in range(2):
            self.model.step(xs, scratch, scratch)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model.step(xs, h, h)  # recorded, not run: the state advances only on replay
        return graph, xs

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        h = self.model.hidden
        key = (tuple(x.shape), x.stride(), x.dtype, x.device, h.data_ptr(), tuple(h.shape), h.stride())
        entry = self.graphs.get(key)
        if entry is None:
            entry = self.graphs[key] = self._capture(x, h)
        graph, xs = entry
        xs.copy_(x)
        graph.replay()
        return h.clone()


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.register_buffer("hidden", torch.randn((batch_size, hidden_size)), persistent=False)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()
        self._graph = _StepGraph(self)

    def step(self, x: torch.Tensor, h: torch.Tensor, h_out: torch.Tensor) -> torch.Tensor:
        """``h_out = tanh(i2h(cat(x, h)))`` (``h_out`` may be ``h``: it is written after ``h`` is read)."""
        pre = F.linear(torch.cat((x, h), dim=1), self.i2h.weight, self.i2h.bias)
        return torch.tanh(pre, out=h_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.hidden
        if (torch.is_grad_enabled() or not (x.is_cuda and h.is_cuda) or type(x) is not torch.Tensor
                or torch.cuda.is_current_stream_capturing()):
            h_new = torch.tanh(F.linear(torch.cat((x, h), dim=1), self.i2h.weight, self.i2h.bias))
            h.copy_(h_new.detach())
            return h_new
        return self._graph(x)
