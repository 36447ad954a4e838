"""Run every CUDA C kernel of the zoo against its reference on a GPU, and optionally time it beside Triton
and PyTorch.

    python -m cudal1.kernelzoo.cuda_check            # one line per (op, case): max error, ok/FAIL; exit 1 on a failure
    python -m cudal1.kernelzoo.cuda_check --bench    # also ms per call at the suite's sizes: cuda C, triton, torch

Needs a CUDA GPU and CuPy (``pip install 'cudal1-kernelzoo[cuda13]'``). Cases cover odd row lengths, tails,
misaligned inputs (the scalar paths), rows too long for registers (the streaming paths) and -inf/NaN.
Sources are found, not listed: every op module's ``CUDA_SOURCES`` (see :func:`cuda_sources`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch

from .bench_timer import time_ms
from .kernel_specs import CudaSource

__all__ = ["CheckResult", "cuda_sources", "main", "self_check"]


def cuda_sources() -> list[tuple[ModuleType, CudaSource]]:
    """(module, source) for every ``CUDA_SOURCES`` entry of every op module."""
    from .compile_targets import op_modules

    return [(mod, src) for mod in op_modules() for src in getattr(mod, "CUDA_SOURCES", [])]


@dataclass(frozen=True)
class CheckResult:
    op: str
    case: str
    max_abs_err: float
    max_rel_err: float  # max |got - want| / (atol + rtol * |want|); <= 1 passes
    ok: bool


ATOL, RTOL = 1e-5, 1e-5


def _inputs(op: str, shape: tuple[int, ...], gen: torch.Generator, dev: str) -> tuple:
    x = (torch.randn(shape, generator=gen) * 3 + 0.3).to(dev)
    n = shape[-1]
    if op == "layer_norm":
        return x, torch.randn(n, generator=gen).to(dev), torch.randn(n, generator=gen).to(dev), 1e-5
    if op == "rms_norm":
        return x, torch.randn(n, generator=gen).to(dev), 1e-6
    return (x,)


ELEMENTWISE_SHAPES = [(1,), (3,), (5, 123), (4097,), (1000003,), (4096, 4096)]
ROW_SHAPES = [(1, 1), (5, 123), (3, 7, 33), (4, 2049), (64, 4096), (8, 16384), (4, 32768), (2, 40000), (3, 100003)]


def _cases(op: str) -> list[tuple[str, Callable[[torch.Generator, str], tuple]]]:
    shapes = ELEMENTWISE_SHAPES if op in ("relu", "gelu", "silu") else ROW_SHAPES
    cases = [(str(s), lambda g, d, s=s: _inputs(op, s, g, d)) for s in shapes]

    elementwise = op in ("relu", "gelu", "silu")

    def misaligned(g, d):  # x starts 4 bytes past an aligned address: the scalar (non-float4) paths
        x, *rest = _inputs(op, (9, 1025), g, d)
        if elementwise:
            return (x.view(-1)[1:],)
        return (x.view(-1)[1:1 + 8 * 1024].view(8, 1024), *(a[:1024] if isinstance(a, torch.Tensor) else a for a in rest))

    def special(g, d):
        x, *rest = _inputs(op, (6, 300), g, d)
        x[0, :7] = float("-inf")
        x[2, 5] = float("nan")
        if op == "softmax":
            x[1, :] = float("-inf")
        if elementwise:
            x[3, 9] = float("inf")
        return (x, *rest)

    return cases + [("misaligned", misaligned), ("inf/nan", special)]


def _compare(got: torch.Tensor, want: torch.Tensor) -> tuple[float, float, bool]:
    same_nan = torch.equal(torch.isnan(got), torch.isnan(want))
    fin = torch.isfinite(want)
    inf_ok = torch.equal(got[~fin & ~torch.isnan(want)], want[~fin & ~torch.isnan(want)])
    g, w = got[fin].double(), want[fin].double()
    if g.numel() == 0:
        return 0.0, 0.0, same_nan and inf_ok
    err = (g - w).abs()
    rel = float((err / (ATOL + RTOL * w.abs())).max())
    return float(err.max()), rel, same_nan and inf_ok and rel <= 1.0 and bool(torch.isfinite(g).all())


def self_check(seed: int = 0) -> list[CheckResult]:
    """Every CUDA C kernel against its reference on each case; needs a CUDA GPU and CuPy."""
    if not torch.cuda.is_available():
        raise RuntimeError("cuda_check needs a CUDA GPU")
    out = []
    for mod, _ in cuda_sources():
        op = mod.__name__.rsplit(".", 1)[1]
        launch_cuda, ref = getattr(mod, f"{op}_launch_cuda"), getattr(mod, f"{op}_ref")
        for case, make in _cases(op):
            args = make(torch.Generator().manual_seed(seed), "cuda")
            got = launch_cuda(*args)
            torch.cuda.synchronize()
            want = ref(*args)
            out.append(CheckResult(op, case, *_compare(got, want)))
    return out


SUITE_SHAPES = {"relu": (16384, 32768), "gelu": (16384, 32768), "silu": (16384, 32768),
                "softmax": (32768, 16384), "layer_norm": (32, 2048, 8192), "rms_norm": (16, 4096, 4096)}


def bench() -> list[tuple[str, float, float, float]]:
    """(op, cuda C ms, triton ms, torch ms) per op at the built-in suite's sizes (warm L2; a first look)."""
    rows = []
    for mod, _ in cuda_sources():
        op = mod.__name__.rsplit(".", 1)[1]
        if op not in SUITE_SHAPES:
            continue
        args = _inputs(op, SUITE_SHAPES[op], torch.Generator().manual_seed(0), "cuda")
        fns = [getattr(mod, f"{op}_launch_cuda"), getattr(mod, f"{op}_launch"), getattr(mod, f"{op}_ref")]
        rows.append((op, *(time_ms(lambda f=f, a=args: f(*a)) for f in fns)))
        del args
        torch.cuda.empty_cache()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", action="store_true", help="also time cuda C / triton / torch at suite sizes")
    a = ap.parse_args(argv)
    results = self_check()
    for r in results:
        print(f"{r.op:<11} {r.case:<16} max_abs_err {r.max_abs_err:.3e}  err/tol {r.max_rel_err:.3f}  "
              f"{'ok' if r.ok else 'FAIL'}")
    bad = [r for r in results if not r.ok]
    print(f"{len(results) - len(bad)} passed, {len(bad)} failed")
    if a.bench:
        print(f"{'op':<11} {'cuda C ms':>10} {'triton ms':>10} {'torch ms':>10}  ({torch.cuda.get_device_name()})")
        for op, c, t, e in bench():
            print(f"{op:<11} {c:>10.3f} {t:>10.3f} {e:>10.3f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
