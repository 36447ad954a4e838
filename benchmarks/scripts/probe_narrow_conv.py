# ruff: noqa: B023  (each lambda is called at once, inside its loop iteration)
"""``blocks.narrow_conv`` (2-D convolution of few input channels, and the depthwise-separable pair, as one
outer-product Triton launch) at KernelBench level 1's sizes (55, 56, 62, 63, 80, 86, 87: 3 -> 64 channels), against
eager (cuDNN, TF32 off) and the CUDA C kernel of ``blocks.conv_rows_cuda`` that the set's 62, 63, 80 and 87 use, over
a few tiles. GPU only (about a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/scripts/probe_narrow_conv.py [--out F]

Two figures a variant, as in ``probe_small_conv.py``: the harness-like call (``probe_streaming_pool.run_task``) and
the GPU time of one call in a stream of 50 back-to-back calls; and the output's write rate at the back-to-back time.
The probe, not the harness: only the harness's numbers are results.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import torch.nn.functional as F
from probe_cudnn_fused import timed as back_to_back_ms
from probe_streaming_pool import log, report, run_task

from cudal1.harness.timing import Timer
from cudal1.kernelzoo.blocks import conv_rows_cuda
from cudal1.kernelzoo.blocks import narrow_conv as nc

#: task, H, W, kernel, stride, padding, dilation, separable
SHAPES = (("55_conv_standard_2D__asymmetric_input__square_kernel", 128, 256, (3, 3), 1, 0, 1, False),
          ("56_conv_standard_2D__asymmetric_input__asymmetric_kernel", 256, 128, (3, 5), 1, 0, 1, False),
          ("62_conv_standard_2D__square_input__asymmetric_kernel", 256, 256, (3, 5), 1, 0, 1, False),
          ("63_conv_standard_2D__square_input__square_kernel", 256, 256, (3, 3), 1, 0, 1, False),
          ("80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__", 256, 256, (3, 5), 1, (1, 2),
           (2, 1), False),
          ("86_conv_depthwise_separable_2D", 256, 256, (3, 3), 1, 0, 1, True),
          ("87_conv_pointwise_2D", 256, 256, (1, 1), 1, 0, 1, False))
TILES = ((64, 256, 8), (64, 256, 4), (64, 128, 4), (64, 128, 8), (32, 256, 4), (32, 128, 4))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("probe_narrow_conv times CUDA kernels: no CUDA device is available")
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    g = torch.Generator(device=dev).manual_seed(0)
    log(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, {opts.rounds} rounds")
    rows: list[dict] = []
    b2b: dict[str, float] = {}
    for task, h, w, k, s, p, d, sep in SHAPES:
        xx = torch.randn(16, 3, h, w, device=dev, generator=g)
        if sep:
            dw = torch.randn(3, 1, *k, device=dev, generator=g)
            pw = torch.randn(64, 3, 1, 1, device=dev, generator=g)
            variants = {"eager": lambda: F.conv2d(F.conv2d(xx, dw, None, s, p, d, 3), pw)}

            def ours(t=None):
                return nc.separable_conv2d(xx, dw, None, pw, None, s, p, d, tile=t)
        else:
            wt = torch.randn(64, 3, *k, device=dev, generator=g)
            variants = {"eager": lambda: F.conv2d(xx, wt, None, s, p, d),
                        "conv_rows_cuda": lambda: conv_rows_cuda.conv(xx, wt, None, s, p, d, 1)}

            def ours(t=None):
                return nc.conv2d(xx, wt, None, s, p, d, tile=t)
        want = variants["eager"]()
        got = ours()
        err = float((got - want).abs().max() / want.abs().max())
        log(f"{task}: max |ours - eager| / max |eager| = {err:.3g}")
        out_bytes = want.numel() * 4
        variants["narrow auto " + str(nc.conv_tile(64, want.shape[-1]))] = lambda: ours()
        for t in TILES:
            variants[f"narrow {t}"] = (lambda t=t: ours(t))
        rows += run_task(task, variants, timer, opts.rounds)
        for name, fn in variants.items():
            try:
                ms = back_to_back_ms(fn)
                b2b[f"{task} | {name}"] = ms
                log(f"  b2b {name:28s} {ms:.4f} ms  {out_bytes / ms / 1e9:.0f} GB/s of output")
            except Exception as e:  # noqa: BLE001
                log(f"{task} {name} back-to-back failed: {e}")
    report(rows, opts.out, torch.cuda.get_device_name(dev), opts.rounds, widths=(40, 26))
    if opts.out:
        Path(opts.out).with_suffix(".b2b.json").write_text(json.dumps(b2b, indent=1))


if __name__ == "__main__":
    main()
