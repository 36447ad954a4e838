"""How the reference is run for timing: eager, torch.compile (default / reduce-overhead), CUDA graph,
cuDNN benchmark mode. Correctness is always judged against the eager reference; the baseline only
decides what the candidate's time is compared with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from .config import BASELINES


class BaselineError(RuntimeError):
    """The reference could not be run in the requested baseline mode."""


def _cudagraph_runner(model: nn.Module, input_sets: Sequence[Sequence[Any]]) -> Callable[..., Any]:
    """One captured graph per input set (no copies into static buffers inside the timed call)."""
    graphs: dict[tuple[int, ...], tuple[torch.cuda.CUDAGraph, Any]] = {}
    for args in input_sets:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                model(*args)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(*args)
        graphs[_key(args)] = (g, out)

    def run(*args: Any) -> Any:
        g, out = graphs[_key(args)]
        g.replay()
        return out

    return run


def _key(args: Sequence[Any]) -> tuple[int, ...]:
    return tuple(a.data_ptr() if isinstance(a, torch.Tensor) else id(a) for a in args)


def reference_runner(
    model: nn.Module, baseline: str, input_sets: Sequence[Sequence[Any]], device: torch.device
) -> Callable[..., Any]:
    """A callable that runs the reference in ``baseline`` mode on any of ``input_sets``.

    Raises:
        BaselineError: the mode needs CUDA and the device is a CPU, or capture/compilation failed.
    """
    if baseline not in BASELINES:
        raise BaselineError(f"unknown baseline {baseline!r}")
    if baseline == "eager":
        return model
    if baseline in ("cudagraph", "cudnn", "compile-reduce-overhead") and device.type != "cuda":
        raise BaselineError(f"baseline {baseline!r} needs a CUDA device")
    try:
        if baseline == "compile":
            return torch.compile(model)
        if baseline == "compile-reduce-overhead":
            return torch.compile(model, mode="reduce-overhead")
        if baseline == "cudagraph":
            return _cudagraph_runner(model, input_sets)
    except Exception as e:  # noqa: BLE001
        raise BaselineError(f"reference failed in baseline {baseline!r}: {type(e).__name__}: {e}") from e
    # cudnn: benchmark mode on only while the reference runs
    def run_cudnn(*args: Any) -> Any:
        prev = torch.backends.cudnn.benchmark
        torch.backends.cudnn.benchmark = True
        try:
            return model(*args)
        finally:
            torch.backends.cudnn.benchmark = prev

    return run_cudnn
