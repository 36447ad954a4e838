"""GPU probe of blocks.recurrent (KernelBench level 3 LSTM / GRU sizes): cuDNN eager and under a CUDA graph,
then the persistent Triton recurrence per launch config: max error against cuDNN and time per forward.

    python3 benchmarks/scripts/probe_recurrent.py            # every case, each variant in its own process
    python3 benchmarks/scripts/probe_recurrent.py CASE   # one case, every variant (what the driver runs)

Times: CUDA events around one forward, median of 10 after 3 warm-up calls (ms). Not a harness measurement.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import torch
from torch import nn

CASES = {"lstm": ("lstm", False), "lstm_bi": ("lstm", True), "gru": ("gru", False), "gru_bi": ("gru", True)}
VARIANTS = ["cudnn", "k16w4", "k16w8", "k8w4", "k4w4", "k32w4", "k32w8", "k16w4_graph", "cudnn_graph"]
B, T, I, H, L = 10, 512, 128, 256, 6  # noqa: E741 - the task's names


def timed(fn, n: int = 10) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def one(case: str, variant: str) -> dict:
    from cudal1.kernelzoo.blocks import recurrent as R
    from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    kind, bi = CASES[case]
    torch.manual_seed(0)
    dev = torch.device("cuda")
    m = (nn.LSTM if kind == "lstm" else nn.GRU)(I, H, L, batch_first=(kind == "lstm"), bidirectional=bi).to(dev).eval()
    D = 2 if bi else 1
    x = torch.randn(B, T, I, device=dev) if kind == "lstm" else torch.randn(T, B, I, device=dev)
    h0 = torch.randn(L * D, B, H, device=dev)
    c0 = torch.randn(L * D, B, H, device=dev)

    def cudnn():
        return m(x, (h0, c0)) if kind == "lstm" else m(x, h0)

    with torch.no_grad():
        ref = cudnn()
        ref_out, ref_h = ref[0], (ref[1][0] if kind == "lstm" else ref[1])
        if variant == "cudnn":
            fn = cudnn
        elif variant == "cudnn_graph":
            g = CUDAGraphForward(lambda xx: cudnn())
            fn = lambda: g(x)  # noqa: E731
        else:
            spec = variant.removeprefix("k").removesuffix("_graph")
            bh, nw = (int(v) for v in spec.split("w"))

            def ours(xx=x):
                return R._run_layers(m, xx, h0, c0 if kind == "lstm" else None, block_h=bh, num_warps=nw)
            if variant.endswith("_graph"):
                g = CUDAGraphForward(lambda xx: ours(xx)[:2])
                fn = lambda: g(x)  # noqa: E731
            else:
                fn = ours
        got = fn()
        err_out = float((got[0] - ref_out).abs().max())
        err_h = float(((got[1][0] if (variant.startswith("cudnn") and kind == "lstm") else got[1]) - ref_h).abs().max())
        ms = timed(fn)
    return {"case": case, "variant": variant, "ms": round(ms, 3), "err_out": err_out, "err_h": err_h}


def main() -> int:
    if len(sys.argv) == 2:
        for variant in VARIANTS:
            try:
                print(json.dumps(one(sys.argv[1], variant)), flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(json.dumps({"case": sys.argv[1], "variant": variant, "error": f"{type(e).__name__}: {e}"[:600]}),
                      flush=True)
        return 0
    for case in CASES:  # a process per case: a deadlocked kernel loses only the rest of its case
        try:
            p = subprocess.run([sys.executable, __file__, case], capture_output=True, text=True, timeout=150)
            print(p.stdout, p.stderr[-1500:] if p.returncode else "", flush=True)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            print(out, json.dumps({"case": case, "error": "timeout (150 s): deadlock?"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
