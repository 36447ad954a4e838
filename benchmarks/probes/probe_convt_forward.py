"""Stride-1 transposed convolutions of KernelBench level 1 (32 -> 64 channels: 57, 65, 69, 71, 78; 68 in 3-D) three
ways: eager (cuDNN's fp32 transposed convolution, its backward-data kernels), the Triton implicit GEMM of
``blocks.conv_transpose``, and cuDNN's forward convolution of the weight flipped along every spatial axis with its
channel axes swapped (the same linear map, ``blocks.convt_as_conv``: NCHW, channels-last, channels-last converted
back to NCHW). One line per variant: the GPU time of one call in a stream of back-to-back calls (CUDA events, no
flush) and its rate in TFMA/s; for the 2-D tasks one call timed as the harness times it (L2 flushed, the device
synchronised on both sides, host clock; outputs of 16 calls kept) and eager's over that; the max error of sample 0
against a float64 transposed convolution divided by eager's. GPU only (under a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_convt_forward.py [TASK ...]

The 2026-11-28 runs (sixteenth pass) also timed ``blocks.conv_slide_cuda``, a direct CUDA C convolution written for
these shapes (commit 4c27d9c): it was no faster than the Triton kernel and was removed. The probe, not the harness:
only the harness's numbers are results.
"""

# ruff: noqa: B023, E731  (each lambda is called at once, inside its loop iteration)
from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F
from probe_conv_vec import harness_like_ms
from probe_cudnn_fused import timed as back_to_back_ms

from cudal1.harness.timer import Timer
from cudal1.kernelzoo.blocks import conv_transpose as ct
from cudal1.kernelzoo.blocks import convt_as_conv

#: task: input (C, [D,] H, W), kernel, transposed-convolution padding
SHAPES = {
    "57": ((32, 128, 128), (3, 3), 0),
    "65": ((32, 128, 128), (3, 5), 0),
    "69": ((32, 16, 32), (3, 5), 0),
    "71": ((32, 128, 256), (3, 3), 0),
    "78": ((32, 128, 256), (3, 5), (1, 2)),
    "68": ((32, 64, 64, 64), (3, 5, 5), 0),
}


def main() -> None:
    if not torch.cuda.is_available():
        raise SystemExit("probe_convt_forward times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    timer = Timer(dev, l2_flush_bytes=2 * int(torch.cuda.get_device_properties(dev).L2_cache_size))
    tasks = sys.argv[1:] or list(SHAPES)
    t0 = time.perf_counter()
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}; no bias (as the tasks); b2b: back to back; "
          f"harness: L2 flushed and device synchronised around each call, outputs of 16 calls kept (2-D tasks)")
    print(f"{'task':4s} {'variant':20s} {'b2b ms':>8s} {'TFMA/s':>6s} {'harness':>7s} {'x eager':>7s}  err / eager's err")
    for task in tasks:
        (cin, *sp), k, p = SHAPES[task]
        x = torch.randn(16, cin, *sp, device=dev, generator=g)
        w = torch.randn(cin, 64, *k, device=dev, generator=g) / (cin * len(k)) ** 0.5
        convt = F.conv_transpose2d if len(sp) == 2 else F.conv_transpose3d
        conv = F.conv2d if len(sp) == 2 else F.conv3d
        exact = convt(x[:1].double(), w.double(), None, 1, p)
        fma = exact.numel() * 16 * cin * torch.tensor(k).prod().item()
        fpad = convt_as_conv.forward_padding(k, p, 1)
        fmt = torch.channels_last if len(sp) == 2 else torch.channels_last_3d
        nhwc = lambda: conv(x.contiguous(memory_format=fmt),
                            convt_as_conv.flipped_weight(w).contiguous(memory_format=fmt), None, 1, fpad)
        runs = {"eager (cuDNN)": lambda: convt(x, w, None, 1, p),
                "triton implicit GEMM": lambda: ct.conv_transpose(x, w, None, 1, p),
                "cudnn forward": lambda: convt_as_conv.conv_transpose(x, w, None, 1, p),
                "cudnn fwd NHWC": nhwc,
                "cudnn fwd NHWC>NCHW": lambda: nhwc().contiguous()}
        e_err = e_host = None
        for name, fn in runs.items():
            try:
                got = fn()
                if tuple(got.shape[1:]) != tuple(exact.shape[1:]) or got.shape[0] != 16:
                    raise ValueError(f"shape {tuple(got.shape)}, want (16, {tuple(exact.shape[1:])})")
                err = float((got[:1].double() - exact).abs().max())
                e_err = e_err or err
                del got
                ms = back_to_back_ms(fn, 3 if task == "68" else 30)
                host = float("nan")
                if len(sp) == 2:
                    host, _ = harness_like_ms(fn, timer, calls=16, batches=2)
                    e_host = e_host or host
                print(f"{task:4s} {name:20s} {ms:8.4f} {fma / ms / 1e9:6.1f} {host:7.4f} {(e_host or host) / host:7.2f}  "
                      f"{err / max(e_err, 1e-30):.2f} ({err:.2g})", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{task:4s} {name:20s} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
