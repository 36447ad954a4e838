"""``blocks.conv_slide_cuda`` (a direct convolution whose threads slide a register window along the row) against
eager (cuDNN's fp32 transposed convolution) and the Triton implicit GEMM of ``blocks.conv_transpose`` (the set's
kernel for these tasks) at KernelBench level 1's stride-1 transposed convolutions of 32 -> 64 channels (57, 65, 69,
71, 78; 68 in 3-D), one line per variant. Per variant: registers and local (spill) bytes a thread; the GPU time of one
call in a stream of back-to-back calls (CUDA events, no flush) and its rate in TFMA/s; for the 2-D tasks one call
timed as the harness times it (L2 flushed, the device synchronised on both sides, host clock; outputs of 32 calls
kept) and eager's over that; beside them cuDNN's forward convolution of the flipped, channel-swapped weight (the
same transposed convolution: NCHW, channels-last, channels-last converted back to NCHW); the max error of sample 0 against a float64 transposed convolution divided by eager's
(below ~2: as exact as cuDNN's fp32). GPU only (a few minutes on an H100, most of it 68's eager):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/scripts/probe_conv_slide.py [TASK ...]

The probe, not the harness: only the harness's numbers are results.
"""

# ruff: noqa: B023, E731  (each lambda is called at once, inside its loop iteration)
from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F
from probe_conv_vec import harness_like_ms
from probe_cudnn_fused import timed as back_to_back_ms

from cudal1.harness.timing import Timer
from cudal1.kernelzoo import cuda_jit
from cudal1.kernelzoo.blocks import conv_slide_cuda as cs
from cudal1.kernelzoo.blocks import conv_transpose as ct

T = cs.Tile
#: task: input (C, [D,] H, W), kernel, transposed-convolution padding
SHAPES = {
    "57": ((32, 128, 128), (3, 3), 0),
    "65": ((32, 128, 128), (3, 5), 0),
    "69": ((32, 16, 32), (3, 5), 0),
    "71": ((32, 128, 256), (3, 3), 0),
    "78": ((32, 128, 256), (3, 5), (1, 2)),
    "68": ((32, 64, 64, 64), (3, 5, 5), 0),
}
VARIANTS = {"slide default": cs.DEFAULT_TILE, "slide 2 stages": T(stages=2), "slide rb2": T(rb=2),
            "slide plain stores": T(streaming=False)}


def main() -> None:
    if not torch.cuda.is_available():
        raise SystemExit("probe_conv_slide times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    timer = Timer(dev, l2_flush_bytes=2 * int(torch.cuda.get_device_properties(dev).L2_cache_size))
    tasks = sys.argv[1:] or list(SHAPES)
    t0 = time.perf_counter()
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}; no bias (as the tasks); b2b: back to back; "
          f"harness: L2 flushed and device synchronised around each call, outputs of 32 calls kept (2-D tasks)")
    print(f"{'task':4s} {'variant':20s} {'regs':>4s} {'spill':>5s} {'b2b ms':>8s} {'TFMA/s':>6s} {'harness':>7s} "
          f"{'x eager':>7s}  err / eager's err")
    for task in tasks:
        (cin, *sp), k, p = SHAPES[task]
        x = torch.randn(16, cin, *sp, device=dev, generator=g)
        w = torch.randn(cin, 64, *k, device=dev, generator=g) / (cin * len(k)) ** 0.5
        convt = F.conv_transpose2d if len(sp) == 2 else F.conv_transpose3d
        eager = lambda: convt(x, w, None, 1, p)
        exact = convt(x[:1].double(), w.double(), None, 1, p)
        fma = exact.numel() * 16 * cin * torch.tensor(k).prod().item()
        e_err = float((eager()[:1].double() - exact).abs().max())
        runs = {"eager (cuDNN)": (eager, None), "triton (the set's)": (lambda: ct.conv_transpose(x, w, None, 1, p),
                                                                       None)}
        runs.update({name: ((lambda t=t: cs.conv_transpose(x, w, None, 1, p, tile=t)), t)
                     for name, t in VARIANTS.items()})
        conv = F.conv2d if len(sp) == 2 else F.conv3d
        axes = tuple(range(2, 2 + len(k)))
        fpad = tuple(kk - 1 - q for kk, q in zip(k, cs._ints(p, len(k)), strict=True))
        flipped = lambda: w.flip(axes).transpose(0, 1)
        fmt = torch.channels_last if len(sp) == 2 else torch.channels_last_3d
        runs["cudnn forward"] = (lambda: conv(x, flipped(), None, 1, fpad), None)
        runs["cudnn fwd NHWC"] = (lambda: conv(x.contiguous(memory_format=fmt),
                                               flipped().contiguous(memory_format=fmt), None, 1, fpad), None)
        runs["cudnn fwd NHWC>NCHW"] = (lambda: runs["cudnn fwd NHWC"][0]().contiguous(), None)
        e_host = None
        for name, (fn, tile) in runs.items():
            try:
                got = fn()
                if tuple(got.shape[1:]) != tuple(exact.shape[1:]) or got.shape[0] != 16:
                    raise ValueError(f"shape {tuple(got.shape)}, want (16, {tuple(exact.shape[1:])})")
                err = float((got[:1].double() - exact).abs().max())
                del got
                reps = 3 if task == "68" else 30
                ms = back_to_back_ms(fn, reps)
                host = float("nan")
                if len(sp) == 2:
                    host, _ = harness_like_ms(fn, timer, calls=16, batches=2)
                    e_host = e_host or host
                regs = spill = -1
                if tile is not None:
                    fpad = tuple(d - q for d, q in zip((kk - 1 for kk in k), cs._ints(p, len(k)), strict=True))
                    src = cs.slide_source(16, cin, 64, (1,) * (3 - len(sp)) + tuple(sp), (1,) * (3 - len(k)) + k,
                                          (0,) * (3 - len(k)) + fpad, (1, 1, 1), True, False, tile,
                                          cs._multiprocessors(dev))[0]
                    fk = cuda_jit.get_kernel(src, "conv_slide", 0)
                    regs, spill = getattr(fk, "num_regs", -1), getattr(fk, "local_size_bytes", -1)
                print(f"{task:4s} {name:20s} {regs:4d} {spill:5d} {ms:8.4f} {fma / ms / 1e9:6.1f} {host:7.4f} "
                      f"{(e_host or host) / host:7.2f}  {err / max(e_err, 1e-30):.2f} ({err:.2g})", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{task:4s} {name:20s} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
