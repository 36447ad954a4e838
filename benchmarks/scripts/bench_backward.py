"""Forward+backward time of the zoo ops whose backward used to be their reference's VJP, before and after their
own backward, beside eager PyTorch (issue 17, item 1), on one GPU in one run.

    python3 benchmarks/scripts/bench_backward.py --out OUT.json [--only softmax,matmul] [--dtypes bf16,fp32]

Per op and dtype, three ways of computing the same forward and gradients, each on fresh leaf inputs:

* ``eager``: the op's PyTorch reference and torch's autograd;
* ``zoo_ref_vjp``: the zoo's forward with the backward the op had before (its reference's vector-Jacobian
  product, recomputing the reference forward: ``registry.reference_backward``), built here from the registry's
  parts, so before and after run on the same machine in the same process;
* ``zoo``: the zoo's forward and the backward it registers now (``registry.call``).

Time: ``bench_timer.time_ms`` (cold L2, median of ``--reps`` CUDA-event timed calls) of forward + backward with a
fixed output gradient. The zoo's gradients are compared with eager's (max |diff| / max |eager|) so a fast wrong
backward shows. Writes JSON with the device, versions and one row per (op, dtype).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import cudal1.kernelzoo  # noqa: F401  (registers every op)
from cudal1.kernelzoo import registry
from cudal1.kernelzoo.bench_timer import time_ms

_DEV = "cuda"


def _r(*shape: int, positive: bool = False) -> torch.Tensor:
    t = torch.randn(*shape, device=_DEV)
    return t.abs() + 0.5 if positive else t


def _ids(high: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, high, shape, device=_DEV)


#: op -> its positional arguments at a benchmark size (fp32; cast per dtype), shapes of the models that use them
SIZES: dict[str, Callable[[], tuple]] = {
    "softmax": lambda: (_r(8192, 4096),),
    "log_softmax": lambda: (_r(8192, 4096),),
    "l2_normalize": lambda: (_r(8192, 4096), 1e-12),
    "cumsum": lambda: (_r(4096, 4096), 1),
    "sum_dim": lambda: (_r(64, 4096, 64), 1, False),
    "mean_dim": lambda: (_r(64, 4096, 64), 1, True),
    "max_dim": lambda: (_r(8192, 4096), 1, False),
    "mse_loss": lambda: (_r(8192, 4096), _r(8192, 4096)),
    "smooth_l1_loss": lambda: (_r(8192, 4096), _r(8192, 4096), 0.5),
    "bce_with_logits_mean": lambda: (_r(8192, 4096), torch.rand(8192, 4096, device=_DEV), _r(4096)),
    "cosine_embedding_loss": lambda: (_r(8192, 1024), _r(8192, 1024),
                                      (torch.randint(0, 2, (8192,), device=_DEV) * 2 - 1).float(), 0.1),
    "triplet_margin_loss": lambda: (_r(8192, 1024), _r(8192, 1024), _r(8192, 1024), 1.0, 1e-6, True),
    "group_norm": lambda: (_r(16, 256, 64, 64), 32, _r(256), _r(256), 1e-5),
    "batch_norm": lambda: (_r(16, 256, 64, 64), _r(256), _r(256, positive=True), _r(256), _r(256), 1e-5),
    "add_layer_norm": lambda: (_r(8, 2048, 4096), _r(8, 2048, 4096), _r(4096), _r(4096), _r(4096), 1e-5, "gelu"),
    "embedding_layer_norm": lambda: (_ids(32000, 8, 2048), _r(32000, 1024), _r(2048, 1024), _r(1024), _r(1024),
                                     1e-5),
    "layer_norm_modulate": lambda: (_r(8, 2048, 1024), _r(8, 1024), _r(8, 1024), 1e-6),
    "bias_act": lambda: (_r(16, 256, 64, 64), _r(256), _r(256), _r(16, 256, 64, 64), 0.5, "silu", 1),
    "bias_act_mean": lambda: (_r(16, 256, 64, 64), _r(256), _r(256), "gelu"),
    "bias_glu": lambda: (_r(16, 512, 64, 64), _r(512)),
    "bias_relu_max_pool2d": lambda: (_r(16, 128, 128, 128), _r(128)),
    "rotary": lambda: (_r(256, 2048, 128), _r(2048, 64), _r(2048, 64)),
    "avg_pool2d": lambda: (_r(16, 64, 256, 256), [2, 2], [2, 2], [0, 0], False),
    "avg_pool3d": lambda: (_r(8, 32, 32, 64, 64), [2, 2, 2], [2, 2, 2], [0, 0, 0], True),
    "max_pool2d": lambda: (_r(16, 64, 256, 256), [3, 3], [2, 2], [1, 1]),
    "depthwise_conv2d": lambda: (_r(16, 128, 128, 128), _r(128, 1, 3, 3), _r(128), 1, 1),
    "matmul": lambda: (_r(4096, 4096), _r(4096, 4096)),
    "matvec": lambda: (_r(8192, 8192), _r(8192)),
    "diag_matmul": lambda: (_r(8192), _r(8192, 4096)),
}
#: inputs that are state, not parameters (no gradient wanted)
CONSTANT = {"batch_norm": {1, 2}}
#: ops whose kernels take float32 only (tests/kernelzoo/test_dtypes_gpu.py FP32_ONLY)
FP32_ONLY = {"avg_pool2d", "avg_pool3d", "depthwise_conv2d", "diag_matmul", "matvec", "max_pool2d"}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def _leaves(name: str, base: tuple, dtype: torch.dtype) -> tuple[list[Any], list[int]]:
    args, wrt = [], []
    for i, a in enumerate(base):
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            a = a.to(dtype)
            if i not in CONSTANT.get(name, ()):
                a = a.detach().requires_grad_(True)
                wrt.append(i)
        args.append(a)
    return args, wrt


def _ref_vjp_call(name: str) -> Callable[..., Any]:
    """The zoo op with the backward it had before it got its own: its reference's VJP."""
    save, bwd = registry.reference_backward(registry.reference(name))
    fn = registry._eager_function(name, registry._EAGER[name], save, bwd)
    return lambda *args: fn.apply(*args)


def _step(fn: Callable[..., Any], args: list[Any], wrt: list[int], up: list[torch.Tensor] | None):
    out = fn(*args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    ups = up if up is not None else [torch.randn_like(o) for o in outs]
    grads = torch.autograd.grad(outs, [args[i] for i in wrt], ups, allow_unused=True)
    return outs, ups, grads


def bench(name: str, dtype: torch.dtype, reps: int) -> dict[str, Any]:
    base = SIZES[name]()
    impls = {"eager": registry.reference(name), "zoo_ref_vjp": _ref_vjp_call(name),
             "zoo": lambda *a: registry.call(name, *a)}
    row: dict[str, Any] = {"op": name, "dtype": str(dtype).removeprefix("torch."),
                           "own_backward": registry.has_backward_kernels(name)}
    ups = grads_eager = None
    for label, fn in impls.items():
        args, wrt = _leaves(name, base, dtype)
        _, ups, grads = _step(fn, args, wrt, ups)
        if label == "eager":
            grads_eager = grads
        else:
            errs = [((g.float() - e.float()).abs().max() / e.float().abs().max().clamp_min(1e-30)).item()
                    for g, e in zip(grads, grads_eager, strict=True) if g is not None and e is not None]
            row[f"{label}_grad_rel_err"] = max(errs, default=0.0)
        row[f"{label}_ms"] = time_ms(lambda fn=fn, args=args, wrt=wrt, ups=ups: _step(fn, args, wrt, ups), reps=reps)
        del args, grads
    row["speedup_vs_ref_vjp"] = row["zoo_ref_vjp_ms"] / row["zoo_ms"]
    row["speedup_vs_eager"] = row["eager_ms"] / row["zoo_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="comma-separated op names (default: every op in SIZES)")
    ap.add_argument("--dtypes", default="bf16,fp32")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_backward needs a CUDA GPU", file=sys.stderr)
        return 2
    names = [n for n in a.only.split(",") if n] or list(SIZES)
    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"), "reps": a.reps, "timer": "bench_timer.time_ms (cold L2, median)",
        "rows": []}
    try:
        import triton
        result["triton"] = triton.__version__
    except ImportError:
        pass
    for name in names:
        for dname in a.dtypes.split(","):
            if dname != "fp32" and name in FP32_ONLY:
                continue
            torch.manual_seed(0)
            try:
                row = bench(name, DTYPES[dname], a.reps)
            except Exception as e:  # one op's failure is a row, not the end of the run
                row = {"op": name, "dtype": dname, "error": f"{type(e).__name__}: {e}"[:500]}
            result["rows"].append(row)
            a.out.write_text(json.dumps(result, indent=1))
            print(json.dumps(row), flush=True)
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
