"""``blocks.conv_vec_cuda``'s tiles (lanes own 4 consecutive output columns, 16-byte loads and stores, no
shared-memory epilogue) against eager (cuDNN) at KernelBench level 1's 3 -> 64 channel 2-D convolutions (55, 56, 62,
63, 80, 86 folded, 87), one line per tile: the committed tile (the set's 55 / 56 / 62 / 63 / 80 / 87) and tiles that
copy the next row group's input rows into shared memory while the current one is computed and stored (``stage``;
the seventeenth pass's calls 4 and 7 also timed three ideas since removed: rows of 8-byte multiples stored on 16-byte
boundaries, a row group's values stored while the next is computed, half the blocks started late; their logs hold
them).
Per variant: registers and local (spill) bytes a thread; the GPU time of one call in a stream of 50 back-to-back
calls (CUDA events, no flush); one call timed as the harness times it (L2 flushed, the device synchronised on both
sides, host clock; CUDA events beside it; the outputs of 32 calls kept), and eager's over that; the max error
against a float64 convolution divided by eager's (below ~2: as exact as cuDNN's fp32). Then the cost of the
output's layout (:data:`LAYOUTS`: 63's 254-float rows against 256-float ones, and store-only proxies). GPU only
(under a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_conv_vec.py

The probe, not the harness: only the harness's numbers are results. (Until 2026-11-28's sixteenth pass it also timed
conv_rows_cuda and the unpaired / plain-store / one-row tiles: the fifteenth pass's logs hold those rows.)
"""

# ruff: noqa: B023, E731  (each lambda is called at once, inside its loop iteration)
from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F
from probe_conv_rows_occupancy import SHAPES  # task, H, W, kernel, padding, dilation, separable
from probe_cudnn_fused import timed as back_to_back_ms

from cudal1.harness.timer import Timer
from cudal1.kernelzoo import cuda_jit
from cudal1.kernelzoo.blocks import conv_vec_cuda as cv

T = cv.Tile
VARIANTS = {"vec committed": cv.DEFAULT_TILE, "vec staged": T(stage=True),
            "vec staged ct8 B3": T(ct=8, minb=3, stage=True), "vec staged ct8 g2": cv.STAGED_TILE,
            "vec staged L8": T(stage=True, loop=8)}


def harness_like_ms(fn, timer: Timer, calls: int = 32, batches: int = 3) -> tuple[float, float]:
    """Median host and CUDA-event ms of one call timed as the harness times it (``Timer.time_call_detailed``:
    L2 flushed, whole-device synchronisation on both sides) in batches of ``calls`` whose outputs are all kept."""
    host, event = [], []
    for _ in range(batches):
        kept = []
        for _ in range(calls):
            h, e, out = timer.time_call_detailed(fn, ())
            host.append(h)
            event.append(e)
            kept.append(out)
        del kept
    return statistics.median(host), statistics.median(event)


def main() -> None:
    if not torch.cuda.is_available():
        raise SystemExit("probe_conv_vec times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    timer = Timer(dev, l2_flush_bytes=2 * int(torch.cuda.get_device_properties(dev).L2_cache_size))
    t0 = time.perf_counter()
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}; no bias (as the tasks); b2b: back to back, "
          f"harness: L2 flushed and device synchronised around each call, outputs of 32 calls kept")
    print(f"{'task':4s} {'variant':20s} {'regs':>4s} {'spill':>5s} {'b2b ms':>7s} {'harness':>7s} {'events':>7s} "
          f"{'x eager':>7s}  err / eager's err")
    for task, h, w, k, p, d, sep in SHAPES:
        x = torch.randn(16, 3, h, w, device=dev, generator=g)
        if sep:
            dw = torch.randn(3, 1, *k, device=dev, generator=g)
            pw = torch.randn(64, 3, 1, 1, device=dev, generator=g)
            eager = lambda: F.conv2d(F.conv2d(x, dw, None, 1, p, d, 3), pw)
            exact = F.conv2d(F.conv2d(x.double(), dw.double(), None, 1, p, d, 3), pw.double())
            vec = lambda tile: cv._launch(x, pw, dw, None, k, 64, 1, p, d, tile)
        else:
            wt = torch.randn(64, 3, *k, device=dev, generator=g)
            eager = lambda: F.conv2d(x, wt, None, 1, p, d)
            exact = F.conv2d(x.double(), wt.double(), None, 1, p, d)
            vec = lambda tile: cv.conv_vec(x, wt, None, 1, p, d, tile)
        e_err = float((eager().double() - exact).abs().max())
        runs = {"eager (cuDNN)": (eager, None)}
        runs.update({name: ((lambda t=t: vec(t)), t) for name, t in VARIANTS.items()})
        e_host = None
        for name, (fn, tile) in runs.items():
            try:
                got = fn()
                if tuple(got.shape) != tuple(exact.shape):
                    raise ValueError(f"shape {tuple(got.shape)}, want {tuple(exact.shape)}")
                err = float((got.double() - exact).abs().max())
                del got
                ms = back_to_back_ms(fn)
                host, event = harness_like_ms(fn, timer)
                e_host = e_host or host
                regs = spill = -1
                if tile is not None:
                    src = cv.vec_source(16, 3, 64, (h, w), k, 1, cv._pair(p), cv._pair(d), sep, False, tile,
                                        cv._multiprocessors(dev))[0]
                    fk = cuda_jit.get_kernel(src, "conv_vec", 0)
                    regs, spill = getattr(fk, "num_regs", -1), getattr(fk, "local_size_bytes", -1)
                print(f"{task:4s} {name:20s} {regs:4d} {spill:5d} {ms:7.4f} {host:7.4f} {event:7.4f} "
                      f"{e_host / host:7.2f}  {err / max(e_err, 1e-30):.2f} ({err:.2g})", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{task:4s} {name:20s} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
    store_layouts(dev, g)
    print(f"total {time.perf_counter() - t0:.1f} s")


#: name -> input (C, H, W), kernel, padding, tile: 63's output (254-float rows) beside the same work with 256-float
#: (16-byte aligned) rows, and nearly store-only proxies of both (one input channel, 1 x 3 or 1 x 1 taps), all 64
#: output channels of 16 samples
LAYOUTS = {"63 as is (254 cols)": ((3, 256, 256), (3, 3), 0, cv.DEFAULT_TILE),
           "63 padded (256 cols)": ((3, 256, 256), (3, 3), (0, 1), cv.DEFAULT_TILE),
           "3 taps (254 cols)": ((1, 254, 256), (1, 3), 0, T(loop=16)),
           "1 tap (256 cols)": ((1, 254, 256), (1, 1), 0, T(loop=16)),
           "3 taps (254) plain": ((1, 254, 256), (1, 3), 0, T(loop=16, streaming=False)),
           "1 tap (256) plain": ((1, 254, 256), (1, 1), 0, T(loop=16, streaming=False))}


def store_layouts(dev: torch.device, g: torch.Generator) -> None:
    """How much of a 3 -> 64 channel convolution's time its output rows' layout takes: back-to-back ms and output
    TB/s of :data:`LAYOUTS`."""
    print(f"{'layout':24s} {'out':>12s} {'b2b ms':>7s} {'out TB/s':>8s} ok")
    for name, ((c, h, w), k, p, tile) in LAYOUTS.items():
        x = torch.randn(16, c, h, w, device=dev, generator=g)
        wt = torch.randn(64, c, *k, device=dev, generator=g)
        fn = lambda: cv.conv_vec(x, wt, None, 1, p, 1, tile)
        got = fn()
        ok = torch.allclose(got, F.conv2d(x, wt, None, 1, p, 1), rtol=1e-4, atol=1e-4)
        ms = back_to_back_ms(fn)
        print(f"{name:24s} {str(tuple(got.shape[2:])):>12s} {ms:7.4f} {got.numel() * 4 / ms / 1e9:8.2f} {ok}",
              flush=True)


if __name__ == "__main__":
    main()
