"""A module's inference forward replayed as one CUDA graph (KernelBench solutions whose time is mostly the host
launching many small kernels: the small networks of level 3, multi-kernel tails of levels 1-2).

:class:`CUDAGraphForward` wraps a callable ``fn(*tensors)`` that does only device work. The first call with a new
input signature (shapes, strides, dtypes, device) runs ``fn`` eagerly ``warmup`` times (lazy library handles,
Triton compilation, cuDNN workspaces), then captures one call into a ``torch.cuda.CUDAGraph`` reading fixed
(static) input buffers. Every later call

1. copies its inputs into the static buffers (one ``_foreach_copy_`` launch),
2. replays the graph (one launch for all of ``fn``'s kernels),
3. returns a *new* copy of the graph's outputs (the graph writes the same memory on every replay; handing out that
   memory would let the next call overwrite an output the caller still holds).

So every call computes from its own inputs and returns outputs nobody else writes: a graph is a way to launch
the same kernels, not a cache. What it needs from ``fn``: no host synchronisation or data-dependent shapes
(``.item()``, ``nonzero``), no host-side randomness, and parameters that are updated in place (``load_state_dict``
copies into them) rather than replaced. Inference only: with gradients enabled (outside ``torch.no_grad()``), on
CPU tensors and inside another capture, ``fn`` simply runs eagerly. A capture that fails raises (torch's error, with
the signature): a silent eager fallback would hide the lost speedup, and after a failed capture torch's CUDA random
generator refuses further work in the process (seen with torch 2.11), so there is nothing safe to fall back to.

Memory: each captured signature keeps its static inputs, outputs and a private pool of ``fn``'s intermediates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = ["CUDAGraphForward"]

_Signature = tuple[Any, ...]


def _signature(args: Sequence[Any]) -> _Signature | None:
    """Shapes, strides, dtypes and devices of the tensor arguments (other arguments by value); None when an
    argument is not a CUDA tensor or a plain number (then no graph)."""
    sig: list[Any] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            if not a.is_cuda or type(a) is not torch.Tensor:
                return None
            sig.append((tuple(a.shape), a.stride(), a.dtype, a.device))
        elif isinstance(a, (int, float, bool)) or a is None:
            sig.append(("value", a))
        else:
            return None
    return tuple(sig)


def _copy_out(out: Any) -> Any:
    """A fresh copy of every tensor of ``out`` (a tensor, or a tuple/list of them)."""
    if isinstance(out, torch.Tensor):
        return out.clone()
    if isinstance(out, (tuple, list)):
        return type(out)(_copy_out(o) for o in out)
    return out


class _Captured:
    """One captured signature: the graph, its static inputs and outputs."""

    def __init__(self, graph: torch.cuda.CUDAGraph, static_in: list[Any], static_out: Any) -> None:
        self.graph, self.static_in, self.static_out = graph, static_in, static_out
        self.tensor_pos = [i for i, a in enumerate(static_in) if isinstance(a, torch.Tensor)]

    def __call__(self, args: Sequence[Any]) -> Any:
        if len(self.tensor_pos) == 1:
            i = self.tensor_pos[0]
            self.static_in[i].copy_(args[i])
        elif self.tensor_pos:
            torch._foreach_copy_([self.static_in[i] for i in self.tensor_pos], [args[i] for i in self.tensor_pos])
        self.graph.replay()
        return _copy_out(self.static_out)


class CUDAGraphForward:
    """``fn(*args)`` replayed as a CUDA graph per input signature (see the module docstring).

    Args:
        fn: device work only; tensors in, a tensor or a tuple of tensors out.
        warmup: eager calls on the static inputs before the capture (>= 1).
    """

    def __init__(self, fn: Callable[..., Any], warmup: int = 2) -> None:
        if warmup < 1:
            raise ValueError(f"warmup must be >= 1 eager call before a capture, got {warmup}")
        self.fn, self.warmup = fn, int(warmup)
        self._graphs: dict[_Signature, _Captured] = {}

    def _capture(self, args: Sequence[Any]) -> _Captured:
        static_in = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        for _ in range(self.warmup):
            self.fn(*static_in)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = self.fn(*static_in)
        return _Captured(graph, static_in, static_out)

    def __call__(self, *args: Any) -> Any:
        # eager: no CUDA tensors, gradients enabled, or inside another capture
        sig = None if torch.is_grad_enabled() else _signature(args)
        if sig is None or torch.cuda.is_current_stream_capturing():
            return self.fn(*args)
        captured = self._graphs.get(sig)
        if captured is None:
            captured = self._graphs[sig] = self._capture(args)
        return captured(args)
