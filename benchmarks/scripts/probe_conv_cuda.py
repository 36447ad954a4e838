"""``blocks.conv_cuda`` (direct convolution in CUDA C) against cuDNN (fp32, TF32 off) at the KernelBench level-1
standard convolutions' own sizes, timed like the harness (L2 flushed, sync -> call -> sync, host clock; median).

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/scripts/probe_conv_cuda.py KB_LEVEL1_DIR

Prints per task: cuDNN ms, each config's ms and speedup, and the max error of cuDNN and of the kernel against an
fp64 convolution (relative to the output's RMS).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks import conv_cuda

TASKS = ["54", "55", "56", "59", "60", "62", "63", "66", "67", "76", "80", "86", "87"]


def timed(fn, n: int, flush: torch.Tensor) -> float:
    ts = []
    for _ in range(n):
        flush.zero_()
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def probe_task(path: Path, flush: torch.Tensor) -> None:
    """Time cuDNN and each config on one task; print its rows."""
    g: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), g)
    torch.manual_seed(0)
    model = g["Model"](*g["get_init_inputs"]()).cuda().eval()
    for p in model.parameters():
        nn.init.normal_(p, std=0.1)
    x = g["get_inputs"]()[0].cuda()
    convs = [m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d))]
    with torch.no_grad():
        ref = model(x)
        want = model.double()(x.double())
        model.float()
        rms = want.square().mean().sqrt().item()
        err_ref = (ref.double() - want).abs().max().item() / rms
        if len(convs) == 2:
            d, p = convs

            def run():
                return conv_cuda.separable_conv(x, d.weight, d.bias, p.weight, p.bias, d.stride, d.padding,
                                                d.dilation)
        else:
            c = convs[0]

            def run(c=c):
                return conv_cuda.conv_cuda(x, c.weight, c.bias, c.stride, c.padding, c.dilation)
        big = ref.numel() > 1 << 28
        n = 7 if big else 40
        t_ref = timed(lambda: model(x), n, flush)
        row = [f"{path.stem[:44]:44s} out {tuple(ref.shape)} cuDNN {t_ref:8.3f} ms err {err_ref:.1e}"]
        try:
            got = run()
            err = (got.double() - want).abs().max().item() / rms
            t = timed(run, n, flush)
            row.append(f"  cuda: {t:8.3f} ms {t_ref / t:5.2f}x err {err:.1e}")
        except Exception as e:  # a kernel that fails is reported, the probe goes on
            row.append(f"  cuda: failed {type(e).__name__}: {str(e)[:120]}")
        print("\n".join(row), flush=True)
        del ref, want


def main(level1: Path) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    flush = torch.empty(64 << 20, device="cuda")
    print(torch.cuda.get_device_name(), torch.__version__)
    for num in TASKS:
        probe_task(next(level1.glob(f"{num}_*.py")), flush)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
