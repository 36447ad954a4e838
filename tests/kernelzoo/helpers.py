"""Helpers the kernel-zoo tests share (issue 44, item 6): one seeded random-input maker and one closeness check that
names the worst element when it fails. Imported relatively (``from .helpers import rnd, close_scaled``)."""

from __future__ import annotations

import torch

#: where the kernels run: the GPU when there is one, else the CPU (Triton's interpreter, see conftest.py)
DEV = "cuda" if torch.cuda.is_available() else "cpu"


def rnd(shape, seed: int, dtype: torch.dtype = torch.float32, scale: float = 1.0, shift: float = 0.0,
        device: str = DEV) -> torch.Tensor:
    """Standard-normal values of ``shape`` from a CPU generator seeded ``seed`` (the same on every machine), times
    ``scale`` plus ``shift``, rounded to ``dtype`` and moved to ``device``."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale + shift).to(dtype).to(device)


def close_scaled(got: torch.Tensor, want: torch.Tensor, tol: tuple[float, float], what: str, *,
                 dtype: torch.dtype | None = None, equal_nan: bool = False) -> None:
    """``got`` (any device, compared in fp64 on the CPU) matches ``want`` within ``rtol`` and an ``atol`` scaled by
    the largest finite ``|want|`` (at least 1): ``tol = (atol, rtol)``. With ``dtype``, ``got`` must have it. On a
    mismatch the message names ``what``, the worst element's index and both values, then torch's report."""
    if dtype is not None:
        assert got.dtype == dtype, f"{what}: dtype {got.dtype}, expected {dtype}"
    atol, rtol = tol
    finite = want[want.isfinite()]
    scale = max(1.0, finite.abs().max().item()) if finite.numel() else 1.0
    g = got.double().cpu()
    try:
        torch.testing.assert_close(g, want, atol=atol * scale, rtol=rtol, equal_nan=equal_nan)
    except AssertionError as e:
        worst = ""
        if g.shape == want.shape and g.numel():
            err = (g - want.to(g)).abs().nan_to_num(nan=float("inf"))
            i = tuple(int(v) for v in torch.unravel_index(err.argmax(), err.shape))
            worst = f" worst element {i}: got {g[i].item()!r}, want {want[i].item()!r};"
        raise AssertionError(f"{what}:{worst} {e}") from None


def close_elementwise(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float, *, equal_nan: bool = False,
                      same_shape: bool = True, same_dtype: bool = False) -> None:
    """Every element of ``got`` within ``atol + rtol * |want|`` of ``want`` (``torch.isclose``, broadcasting when
    ``same_shape`` is off); on a mismatch the message counts the mismatches and shows the first five (index, got,
    want)."""
    if same_shape:
        assert got.shape == want.shape, f"shape {tuple(got.shape)} != {tuple(want.shape)}"
    if same_dtype:
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    bad = ~torch.isclose(got, want, atol=atol, rtol=rtol, equal_nan=equal_nan)
    if bool(bad.any()):
        got_b, want_b = torch.broadcast_tensors(got, want)
        idx = bad.nonzero()[:5].tolist()
        raise AssertionError(f"{int(bad.sum())} of {bad.numel()} mismatch, e.g. at {idx}: got {got_b[bad][:5].tolist()}, "
                             f"want {want_b[bad][:5].tolist()}")
