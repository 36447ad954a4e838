"""Launch-config sweep of the LLM training kernels at the shapes of bench_vs_liger.py (bf16, 8192 tokens, hidden
4096, intermediate 14336; cross-entropy 4096 x 128256), timed with the zoo's one cold-L2 timer. Prints one line
per (kernel, config) and writes the table to ``--out`` (JSON), so the op modules' config tables can name their
measured winner.

    python benchmarks/scripts/tune_llm_kernels.py --out tune.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from cudal1.kernelzoo.bench_timer import time_ms
from cudal1.kernelzoo.ops import _norm_backward as nb
from cudal1.kernelzoo.ops import cross_entropy_fused as cf
from cudal1.kernelzoo.ops import rope_qk as rq
from cudal1.kernelzoo.ops import swiglu as sg

DT = torch.bfloat16


def sweep(name: str, configs: list[dict[str, Any]], run: Callable[[dict[str, Any]], Any],
          table: dict[str, Any]) -> None:
    rows = []
    for cfg in configs:
        try:
            ms = time_ms(lambda cfg=cfg: run(cfg), reps=15)
        except Exception as e:  # noqa: BLE001 - a config that fails to launch is a result
            rows.append({"config": cfg, "error": f"{type(e).__name__}: {str(e)[:200]}"})
            print(f"{name:<16} {cfg} error {e}", flush=True)
            continue
        rows.append({"config": cfg, "ms": ms})
        print(f"{name:<16} {json.dumps(cfg):<60} {ms:.4f} ms", flush=True)
    best = min((r for r in rows if "ms" in r), key=lambda r: r["ms"], default=None)
    table[name] = {"rows": rows, "best": best}
    print(f"{name:<16} best {best}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tune.json")
    a = ap.parse_args()
    torch.manual_seed(0)
    table: dict[str, Any] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                             "date": time.strftime("%Y-%m-%d")}
    x = torch.randn(8192, 4096, device="cuda", dtype=DT)
    dy = torch.randn_like(x)
    w = torch.randn(4096, device="cuda", dtype=DT)
    for rms in (True, False):
        sweep("rms_norm_bwd" if rms else "layer_norm_bwd",
              [{"MAX_N": 16384, "PROGRAMS_PER_SM": p, "num_warps": nw} for p, nw in itertools.product((1, 2, 4, 8),
                                                                                                       (4, 8, 16))],
              lambda cfg, rms=rms: nb.norm_backward_launch(x, w, dy, 1e-6, rms=rms, bias=not rms, config=cfg), table)
    g, u = torch.randn(8192, 14336, device="cuda", dtype=DT), torch.randn(8192, 14336, device="cuda", dtype=DT)
    dg = torch.randn_like(g)
    sweep("swiglu_bwd", [{"BLOCK": b, "num_warps": nw} for b, nw in itertools.product((1024, 2048, 4096, 8192),
                                                                                      (4, 8, 16))],
          lambda cfg: sg.swiglu_backward_launch(g, u, dg, config=cfg), table)
    sweep("swiglu_fwd", [{"BLOCK": b, "num_warps": nw} for b, nw in itertools.product((1024, 2048, 4096, 8192),
                                                                                      (4, 8, 16))],
          lambda cfg: sg.swiglu_launch(g, u, config=cfg), table)
    g = u = dg = None  # free the 0.7 GB before the next sweep
    q = torch.randn(4, 2048, 32, 128, device="cuda", dtype=DT).transpose(1, 2)
    k = torch.randn(4, 2048, 8, 128, device="cuda", dtype=DT).transpose(1, 2)
    cos, sin = (torch.randn(4, 2048, 128, device="cuda", dtype=DT) for _ in range(2))
    sweep("rope_qk", [{"TILE": t, "num_warps": nw} for t, nw in itertools.product((512, 1024, 2048, 4096),
                                                                                  (1, 2, 4, 8))],
          lambda cfg: rq.rope_qk_launch(q, k, cos, sin, config=cfg), table)
    z = torch.randn(4096, 128256, device="cuda", dtype=DT) * 2
    t = torch.randint(0, 128256, (4096,), device="cuda")
    sweep("ce_fused", [{"BLOCK": b, "num_warps": nw} for b, nw in itertools.product((1024, 2048, 4096, 8192),
                                                                                    (4, 8, 16))],
          lambda cfg: cf.cross_entropy_fused_launch(z, t, config=cfg), table)
    with open(a.out, "w") as f:
        json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
