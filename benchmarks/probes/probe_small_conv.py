# ruff: noqa: B023  (each lambda is called at once, inside its loop iteration)
"""``blocks.small_conv`` (depthwise 2-D, 1-D and transposed 1-D convolutions, one FastLaunch Triton launch each)
at KernelBench level 1's sizes (82-85, 64, 67, 74, 76, 79), against eager, over a few tiles; and eager's softmax
of a (16, 16384) tensor beside a bare ``torch.empty_like`` as floors. (Call 2 of 2026-11-27 ran it with a rows
softmax kernel beside them, since removed, and the tiles' earlier spelling.) GPU only (about a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_small_conv.py [--out F]

Two figures a variant: the harness-like call (``probe_streaming_pool.run_task``: the harness's ``Timer``, 256 MB
L2 flush, host clock between synchronisations, CUDA-event time beside it, shuffled rounds, medians), and the GPU
time of one call in a stream of 50 back-to-back calls (CUDA events around the stream, no flush: the kernel's own
time once host time is hidden). The probe, not the harness: only the harness's numbers are results.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import torch.nn.functional as F
from probe_cudnn_fused import timed as back_to_back_ms
from probe_streaming_pool import log, report, run_task

from cudal1.harness.timer import Timer
from cudal1.kernelzoo.blocks import small_conv as sc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("probe_small_conv times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    g = torch.Generator(device=dev).manual_seed(0)
    log(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, {opts.rounds} rounds")
    rows: list[dict] = []
    b2b: dict[str, float] = {}

    def run(task: str, variants: dict) -> None:
        nonlocal rows
        rows += run_task(task, variants, timer, opts.rounds)
        for name, fn in variants.items():
            try:
                b2b[f"{task} | {name}"] = back_to_back_ms(fn)
            except Exception as e:  # noqa: BLE001
                log(f"{task} {name} back-to-back failed: {e}")

    x = torch.randn(16, 16384, device=dev, generator=g)
    run("floor (16, 16384)", {"eager": lambda: torch.softmax(x, 1), "empty_like": lambda: torch.empty_like(x)})

    for task, h, w, k in (("82_conv_depthwise_2D_square_input_square_kernel", 256, 256, (3, 3)),
                          ("83_conv_depthwise_2D_square_input_asymmetric_kernel", 256, 256, (3, 1)),
                          ("84_conv_depthwise_2D_asymmetric_input_square_kernel", 128, 256, (3, 3)),
                          ("85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel", 128, 256, (3, 5))):
        xx = torch.randn(16, 3, h, w, device=dev, generator=g)
        wt = torch.randn(3, 1, *k, device=dev, generator=g)
        variants = {"eager": lambda: F.conv2d(xx, wt, None, 1, 0, 1, 3)}
        for tile, nw in (((8, 256), 4), ((4, 256), 4), ((16, 256), 8), ((32, 128), 8), ((16, 128), 4),
                         ((32, 64), 4), ((64, 64), 8), ((2, 256), 2)):
            variants[f"tile {tile} w{nw}"] = (lambda t=(*tile, nw): sc.depthwise_conv2d(xx, wt, None, tile=t))
        run(task, variants)

    for task, c_in, c_out, k, length, s, p, d, tr in (
            ("64_conv_transposed_1D", 64, 3, 3, 128, 1, 0, 1, True),
            ("67_conv_standard_1D", 3, 64, 3, 512, 1, 0, 1, False),
            ("74_conv_transposed_1D_dilated", 3, 64, 5, 256, 1, 0, 3, True),
            ("76_conv_standard_1D_dilated_strided__", 3, 64, 3, 256, 3, 0, 4, False),
            ("79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__", 32, 64, 3, 128,
             2, 1, 2, True)):
        xx = torch.randn(16, c_in, length, device=dev, generator=g)
        if tr:
            wt = torch.randn(c_in, c_out, k, device=dev, generator=g)
            variants = {"eager": lambda: F.conv_transpose1d(xx, wt, None, s, p, 0, 1, d)}
            def ours(t=None):
                return sc.conv_transpose1d(xx, wt, None, s, p, 0, d, tile=t)
        else:
            wt = torch.randn(c_out, c_in, k, device=dev, generator=g)
            variants = {"eager": lambda: F.conv1d(xx, wt, None, s, p, d)}
            def ours(t=None):
                return sc.conv1d(xx, wt, None, s, p, d, tile=t)
        auto = sc.line_tile(c_in, c_out, (length - 1) * s - 2 * p + d * (k - 1) + 1 if tr
                            else (length + 2 * p - d * (k - 1) - 1) // s + 1)
        variants[f"auto {auto}"] = lambda: ours()
        for tile, nw in (((16, 16, 32), 1), ((16, 16, 64), 2), ((32, 16, 32), 2), ((64, 32, 32), 4),
                         ((16, 32, 16), 1)):
            variants[f"tile {tile} w{nw}"] = (lambda t=(*tile, nw): ours(t))
        run(task, variants)

    report(rows, opts.out, torch.cuda.get_device_name(dev), opts.rounds, widths=(40, 26))
    print("\nback-to-back GPU ms a call (50 calls, no flush):")
    for key, ms in b2b.items():
        print(f"  {key:110s} {ms:.4f}")
    if opts.out:
        Path(opts.out).with_suffix(".b2b.json").write_text(json.dumps(b2b, indent=1))


if __name__ == "__main__":
    main()
