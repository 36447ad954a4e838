"""``blocks.conv_rows_cuda`` (the CUDA C direct convolution of the set's 62, 63, 80 and 87) against eager at
KernelBench level 1's 3 -> 64 channel 2-D convolutions (55, 56, 62, 63, 80, 86 folded, 87), as committed and with
its occupancy changed: ``__launch_bounds__(256, B)`` for B = 2 (committed), 3 and 4, and the positions a thread owns
(``WT``) limited. Per variant: registers and local (spill) bytes a thread, the GPU time of one call in a stream of
50 back-to-back calls (CUDA events, no flush; these calls are 0.1-0.3 ms of GPU work), and the output's write rate.
GPU only (about a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_conv_rows_occupancy.py

The probe, not the harness: only the harness's numbers are results.
"""

# ruff: noqa: B023, E731  (each lambda is called at once, inside its loop iteration)
from __future__ import annotations

import time

import torch
import torch.nn.functional as F
from probe_cudnn_fused import timed as back_to_back_ms

from cudal1.kernelzoo import cuda_jit
from cudal1.kernelzoo.blocks import conv_rows_cuda as cr

#: task, H, W, kernel, padding, dilation, separable
SHAPES = (("55", 128, 256, (3, 3), 0, 1, False), ("56", 256, 128, (3, 5), 0, 1, False),
          ("62", 256, 256, (3, 5), 0, 1, False), ("63", 256, 256, (3, 3), 0, 1, False),
          ("80", 256, 256, (3, 5), (1, 2), (2, 1), False), ("86", 256, 256, (3, 3), 0, 1, True),
          ("87", 256, 256, (1, 1), 0, 1, False))
ORIGINAL = (cr._TEMPLATE, cr._WT_CHOICES)
#: name -> (minimum blocks a multiprocessor in __launch_bounds__, WT choices)
VARIANTS = {"committed (B2, WT<=8)": (2, (8, 7, 6, 5, 4)), "B3, WT<=8": (3, (8, 7, 6, 5, 4)),
            "B3, WT<=6": (3, (6, 5, 4)), "B4, WT<=4": (4, (4,)), "B2, WT<=4": (2, (4,)), "B3, WT 4": (3, (4,))}


#: the committed launch bounds, replaced per variant
BOUNDS = "__launch_bounds__(256, 2)"


def use(blocks: int, wts: tuple[int, ...]) -> None:
    if BOUNDS not in ORIGINAL[0]:  # the kernel's template changed: every variant would silently be the committed one
        raise SystemExit(f"conv_rows_cuda's template no longer contains {BOUNDS!r}: update the probe")
    cr._TEMPLATE = ORIGINAL[0].replace(BOUNDS, f"__launch_bounds__(256, {blocks})")
    cr._WT_CHOICES = wts
    cr.rows_source.cache_clear()


def main() -> None:
    if not torch.cuda.is_available():
        raise SystemExit("probe_conv_rows_occupancy times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    t0 = time.perf_counter()
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    print(f"{'task':4s} {'variant':24s} {'regs':>4s} {'spill B':>7s} {'ms':>8s} {'TB/s':>6s} {'x eager':>7s}  check")
    for task, h, w, k, p, d, sep in SHAPES:
        x = torch.randn(16, 3, h, w, device=dev, generator=g)
        if sep:
            dw = torch.randn(3, 1, *k, device=dev, generator=g)
            pw = torch.randn(64, 3, 1, 1, device=dev, generator=g)
            eager = lambda: F.conv2d(F.conv2d(x, dw, None, 1, p, d, 3), pw)
            ours = lambda: cr.separable_conv(x, dw, None, pw, None, 1, p, d)
        else:
            wt = torch.randn(64, 3, *k, device=dev, generator=g)
            eager = lambda: F.conv2d(x, wt, None, 1, p, d)
            ours = lambda: cr.conv(x, wt, None, 1, p, d, 1)
        want = eager()
        e_ms = back_to_back_ms(eager)
        out_bytes = want.numel() * 4
        print(f"{task:4s} {'eager (cuDNN)':24s} {'':>4s} {'':>7s} {e_ms:8.4f} {out_bytes / e_ms / 1e9:6.2f} {1.0:7.2f}")
        for name, (blocks, wts) in VARIANTS.items():
            use(blocks, wts)
            try:
                got = ours()
                err = float((got - want).abs().max() / want.abs().max())
                ms = back_to_back_ms(ours)
                _, sp, ks, st, pd, dl = cr.geometry(x, k, 1, p, d)
                src = cr.rows_source(16, 3, 64, sp, ks, st, pd, dl, sep, False)[0]
                fn = cuda_jit.get_kernel(src, "conv_rows", 0)
                regs, spill = getattr(fn, "num_regs", -1), getattr(fn, "local_size_bytes", -1)
                print(f"{task:4s} {name:24s} {regs:4d} {spill:7d} {ms:8.4f} {out_bytes / ms / 1e9:6.2f} "
                      f"{e_ms / ms:7.2f}  rel err {err:.2g}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{task:4s} {name:24s} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
        use(2, ORIGINAL[1])
    cr._TEMPLATE, cr._WT_CHOICES = ORIGINAL
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
