"""Host time of the zoo's ops on a GPU: where the Python side of a forward+backward goes.

    python3 benchmarks/scripts/host_overhead.py --out OUT.txt [--ops layer_norm,sum_dim,softmax]

1. Triton's own launch cost: an empty kernel launched 2000 times back to back (host us per launch).
2. Per op (bench_backward.SIZES, bf16; layer_norm at 8192 x 4096): host us per forward+backward step measured
   without synchronising (the host runs ahead until the launch queue fills: with a short queue this is the host
   time per step), against eager PyTorch the same way; and a cProfile of 200 steps (top functions by own time),
   which names the Python functions of the zoo that cost.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from bench_backward import DTYPES, SIZES, _leaves, _step  # noqa: E402

from cudal1.kernelzoo import registry  # noqa: E402

SIZES = {**SIZES, "layer_norm": lambda: (torch.randn(8192, 4096, device="cuda"), torch.randn(4096, device="cuda"),
                                         torch.randn(4096, device="cuda"), 1e-5),
         "rms_norm": lambda: (torch.randn(8192, 4096, device="cuda"), torch.randn(4096, device="cuda"), 1e-6)}


@triton.jit
def _empty(x_ptr, n, BLOCK: tl.constexpr):
    pass


def _host_us(fn, steps: int) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / steps * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--ops", default="layer_norm,rms_norm,sum_dim,softmax,mse_loss,batch_norm")
    a = ap.parse_args()
    lines: list[str] = [f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}"]
    x = torch.empty(1024, device="cuda")
    for _ in range(10):
        _empty[(1,)](x, 1024, BLOCK=128)
    lines.append(f"empty Triton kernel: {_host_us(lambda: _empty[(1,)](x, 1024, BLOCK=128), 2000):.1f} us per launch")
    lines.append(f"torch x.add_(1): {_host_us(lambda: x.add_(1), 2000):.1f} us per op")
    for name in a.ops.split(","):
        base = SIZES[name]()
        for label, fn in (("zoo", lambda *t, n=name: registry.call(n, *t)), ("eager", registry.reference(name))):
            args, wrt = _leaves(name, base, DTYPES["bf16"])
            _, ups, _ = _step(fn, args, wrt, None)
            def step(fn=fn, args=args, wrt=wrt, ups=ups):
                return _step(fn, args, wrt, ups)

            for _ in range(5):
                step()
            lines.append(f"{name} {label}: {_host_us(step, 50):.1f} us host per fwd+bwd step (no sync)")
            if label == "zoo":
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(200):
                    step()
                prof.disable()
                torch.cuda.synchronize()
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(18)
                lines.append(buf.getvalue())
        torch.cuda.empty_cache()
    a.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
