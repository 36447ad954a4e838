"""Where the fused losses' memory goes on the GPU, and where rms_norm's fwd+bwd time goes (host or device):
memory allocated after the forward, the forward's peak, after the backward, and whether autograd took each
gradient buffer as the gradient (same storage) or copied it; a torch.profiler table of one rms_norm fwd+bwd.

    python benchmarks/scripts/probe_loss_memory.py
"""

from __future__ import annotations

import torch

import cudal1.kernelzoo as kz
from cudal1.kernelzoo.ops import cross_entropy_fused as cf
from cudal1.kernelzoo.ops import fused_linear_cross_entropy as fl

MB = 2**20


def probe(name, run, grads, impl_mod, impl_name, buffer_index):
    seen = {}
    real = getattr(impl_mod, impl_name)

    def rec(*a):
        out = real(*a)
        seen["ptrs"] = [out[i].data_ptr() for i in buffer_index]
        return out

    setattr(impl_mod, impl_name, rec)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = run()
    torch.cuda.synchronize()
    fwd_peak, after_fwd = torch.cuda.max_memory_allocated() - base, torch.cuda.memory_allocated() - base
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    bwd_peak, after_bwd = torch.cuda.max_memory_allocated() - base, torch.cuda.memory_allocated() - base
    setattr(impl_mod, impl_name, real)
    stolen = [g().data_ptr() == p for g, p in zip(grads, seen["ptrs"], strict=True)]
    print(f"{name}: fwd peak {fwd_peak / MB:.0f} MB, after fwd {after_fwd / MB:.0f} MB, bwd peak (from after fwd) "
          f"{bwd_peak / MB:.0f} MB, after bwd {after_bwd / MB:.0f} MB, buffers taken as the gradients: {stolen}",
          flush=True)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(128256, 4096, device="cuda") * 0.02).to(torch.bfloat16).requires_grad_(True)
    t = torch.randint(0, 128256, (8192,), device="cuda")
    probe("fused_linear_cross_entropy", lambda: kz.fused_linear_cross_entropy(x, w, t), [lambda: x.grad, lambda: w.grad],
          fl, "_flce_impl", (1, 2))
    x = w = None  # free them (the lambdas above hold the names, not the tensors)
    z = (torch.randn(4096, 128256, device="cuda") * 2).to(torch.bfloat16).requires_grad_(True)
    t = t[:4096]
    probe("cross_entropy (fused)", lambda: kz.cross_entropy(z, t), [lambda: z.grad], cf, "_ce_fused_impl", (1,))
    z = None
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    for _ in range(3):
        kz.rms_norm(x, g).backward(dy)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            x.grad = g.grad = None
            kz.rms_norm(x, g).backward(dy)
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25), flush=True)


if __name__ == "__main__":
    main()
