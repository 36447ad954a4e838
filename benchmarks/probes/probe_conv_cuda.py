"""``blocks.conv_cuda`` and ``blocks.conv_rows_cuda`` (direct convolutions in CUDA C) against cuDNN (fp32, TF32 off)
at the KernelBench level-1 standard convolutions' own sizes (and, for the transposed task 81,
``blocks.convt_disjoint_cuda`` against ``blocks.conv_transpose``'s Triton kernel), timed like the harness
(``cudal1.harness.timer.Timer``: 256 MB L2 flush, sync -> call -> sync, host clock, the CUDA-event time beside it;
median of ``n`` calls).

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_conv_cuda.py \
        KB_LEVEL1_DIR [TASK ...]

Prints per task: cuDNN's host / event ms, each kernel's host / event ms and speedup (host), and the max error of
cuDNN and of each kernel against an fp64 convolution (relative to the output's RMS). The first version (2026-11-26
call 14) timed ``conv_cuda`` alone, launched through CuPy.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch
import torch.nn as nn

from cudal1.harness.timer import Timer
from cudal1.kernelzoo.blocks import conv_cuda, conv_rows_cuda, conv_transpose, convt_disjoint_cuda

TASKS = ["54", "55", "56", "59", "60", "62", "63", "66", "67", "76", "80", "81", "86", "87"]


def timed(fn, n: int, timer: Timer) -> tuple[float, float]:
    """Median host and CUDA-event ms of ``n`` calls, each after an L2 flush."""
    host, event = [], []
    for _ in range(n):
        h, e, out = timer.time_call_detailed(fn, ())
        host.append(h)
        event.append(e if e is not None else float("nan"))
        del out
    return statistics.median(host), statistics.median(event)


def probe_task(path: Path, timer: Timer) -> None:
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
        runs = {}
        for ct in (m for m in model.modules() if isinstance(m, nn.ConvTranspose2d)):
            args = (ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
            runs["triton"] = lambda a=args: conv_transpose.conv_transpose(x, *a)
            runs["disjoint"] = lambda a=args: convt_disjoint_cuda.conv_transpose2d(x, *a)
        for name, mod in (("cuda", conv_cuda), ("rows", conv_rows_cuda)) if convs else ():
            if len(convs) == 2:
                d, p = convs
                runs[name] = (lambda d=d, p=p, mod=mod: mod.separable_conv(
                    x, d.weight, d.bias, p.weight, p.bias, d.stride, d.padding, d.dilation))
            else:
                c = convs[0]
                runs[name] = (lambda c=c, mod=mod: mod.conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation))
        big = ref.numel() > 1 << 28
        n = 9 if big else 40
        h_ref, e_ref = timed(lambda: model(x), n, timer)
        row = [f"{path.stem[:44]:44s} out {tuple(ref.shape)} cuDNN {h_ref:8.3f} ms (event {e_ref:8.3f}) "
               f"err {err_ref:.1e}"]
        for name, run in runs.items():
            try:
                got = run()
                err = (got.double() - want).abs().max().item() / rms
                del got
                h, e = timed(run, n, timer)
                row.append(f"  {name}: {h:8.3f} ms (event {e:8.3f}) {h_ref / h:5.2f}x err {err:.1e}")
            except Exception as ex:  # a kernel that fails is reported, the probe goes on
                row.append(f"  {name}: failed {type(ex).__name__}: {str(ex)[:160]}")
        print("\n".join(row), flush=True)
        del ref, want


def main(level1: Path, tasks: list[str]) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    timer = Timer(torch.device("cuda"), l2_flush_bytes=256 << 20)
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for num in tasks or TASKS:
        probe_task(next(level1.glob(f"{num}_*.py")), timer)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
