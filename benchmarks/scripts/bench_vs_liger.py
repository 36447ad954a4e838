"""The zoo's LLM training ops beside eager PyTorch, torch.compile and Liger-Kernel, on one GPU, in one run.

    python benchmarks/scripts/bench_vs_liger.py ops  --out ops.json           # every op, forward and fwd+bwd
    python benchmarks/scripts/bench_vs_liger.py train --out train.json        # a Llama-shaped training step,
                                                                               # one subprocess per library

Ops are bf16 at LLM shapes (hidden 4096, intermediate 14336, vocabulary 128256, 8192 tokens = batch 4 x
sequence 2048; 4096 tokens for the (tokens, vocabulary) losses). Each (op, implementation) is checked against
eager first (max |difference| of outputs and input gradients, recorded), then timed with the zoo's one timer
(cudal1.kernelzoo.bench_timer: median, cold L2): ``fwd`` is the forward with inputs that require grad (a training
forward), ``full`` forward + backward with a fixed output gradient (grads reset outside the timed interval).
``peak_mb`` is the peak memory allocated during one fwd+bwd above what was allocated before it (inputs, weights).

The training step: a Llama-shaped model from ``transformers.LlamaConfig`` (random weights, bf16, sdpa
attention; hidden 4096, 4 layers, vocabulary 128256), batch 2 x 4096 tokens, AdamW; eager, patched with
``cudal1.kernelzoo.patch`` and with Liger's ``apply_liger_kernel_to_llama(model=...)`` (each in its own process:
both patch module-level functions). Reported: median step ms, tokens/s, peak memory, and the first step's loss
(the same seed gives the same weights and batch in every process, so the losses must agree).

Every figure is written to ``--out`` as it is measured (JSON), so a run cut short keeps what it measured.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

T0 = time.perf_counter()
DT = torch.bfloat16
TOKENS, HIDDEN, INTER, VOCAB, LOSS_TOKENS = 8192, 4096, 14336, 128256, 4096


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:6.1f}s] {msg}", flush=True)


def rnd(*shape: int, grad: bool = True, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
    """A bf16 leaf ``randn * scale + shift`` (requires grad unless ``grad=False``)."""
    return (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale + shift).to(DT).requires_grad_(grad)


# ----------------------------------------------------------------------------------------------- eager forms
def rms_eager(x, w, eps=1e-6):  # transformers' LlamaRMSNorm
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def add_rms_eager(x, r, w, eps=1e-6):
    h = x + r
    return rms_eager(h, w, eps), h


def rope_eager(q, k, cos, sin):  # transformers' apply_rotary_pos_emb
    def rot(t):
        h = t.shape[-1] // 2
        return torch.cat((-t[..., h:], t[..., :h]), dim=-1)

    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * c + rot(q) * s, k * c + rot(k) * s


def flce_eager(x, w, t):
    return F.cross_entropy(F.linear(x, w).float(), t)


def jsd_eager(log_q, log_p, beta=0.5):
    lq, lp = log_q.float(), log_p.float()
    log_m = torch.logaddexp(lp + math.log(beta), lq + math.log(1 - beta))
    rows = beta * (lp.exp() * (lp - log_m)).sum(-1) + (1 - beta) * (lq.exp() * (lq - log_m)).sum(-1)
    return rows.sum() / rows.shape[0]


# ----------------------------------------------------------------------------------------------- the cases
def cases() -> dict[str, dict[str, Any]]:
    """op -> {"inputs": builder, "eager": fn, "liger": fn, "zoo": fn} (fns take the built inputs)."""
    from liger_kernel.transformers import functional as lf
    from liger_kernel.transformers.rope import liger_rotary_pos_emb

    import cudal1.kernelzoo as kz

    def targets(n, v):
        t = torch.randint(0, v, (n,), device="cuda")
        t[::17] = -100  # some ignored positions, as prompts are
        return t

    def rope_inputs():  # q and k as (B, S, H, D) leaves; the functions take the (B, H, S, D) views attention makes
        b, s, hq, hk, d = 4, 2048, 32, 8, 128
        pos = torch.arange(s, device="cuda", dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device="cuda", dtype=torch.float32) / d))
        emb = torch.cat([torch.outer(pos, inv)] * 2, dim=-1)[None].expand(b, s, d)
        return rnd(b, s, hq, d), rnd(b, s, hk, d), emb.cos().to(DT).contiguous(), emb.sin().to(DT).contiguous()

    def heads(f):
        return lambda q, k, c, s: f(q.transpose(1, 2), k.transpose(1, 2), c, s)

    def log_probs(n, v):
        return torch.log_softmax(torch.randn(n, v, device="cuda") * 2, -1).to(DT)

    return {
        "rms_norm": {"inputs": lambda: (rnd(TOKENS, HIDDEN), rnd(HIDDEN, scale=0.1, shift=1.0)),
                     "eager": rms_eager, "liger": lambda x, w: lf.liger_rms_norm(x, w, 1e-6),
                     "zoo": lambda x, w: kz.rms_norm(x, w, 1e-6)},
        "add_rms_norm": {"inputs": lambda: (rnd(TOKENS, HIDDEN), rnd(TOKENS, HIDDEN), rnd(HIDDEN, scale=0.1, shift=1.0)),
                         "eager": add_rms_eager, "liger": lambda x, r, w: lf.liger_fused_add_rms_norm(x, r, w, 1e-6),
                         "zoo": lambda x, r, w: kz.add_rms_norm(x, r, w, 1e-6)},
        "layer_norm": {"inputs": lambda: (rnd(TOKENS, HIDDEN), rnd(HIDDEN, scale=0.1, shift=1.0), rnd(HIDDEN, scale=0.1)),
                       "eager": lambda x, w, b: F.layer_norm(x, (HIDDEN,), w, b, 1e-5),
                       "liger": lambda x, w, b: lf.liger_layer_norm(x, w, b, 1e-5),
                       "zoo": lambda x, w, b: kz.layer_norm(x, w, b, 1e-5)},
        "swiglu": {"inputs": lambda: (rnd(TOKENS, INTER), rnd(TOKENS, INTER)),
                   "eager": lambda a, b: F.silu(a) * b, "liger": lf.liger_swiglu, "zoo": kz.swiglu},
        "geglu": {"inputs": lambda: (rnd(TOKENS, INTER), rnd(TOKENS, INTER)),
                  "eager": lambda a, b: F.gelu(a, approximate="tanh") * b, "liger": lf.liger_geglu,
                  "zoo": lambda a, b: kz.geglu(a, b, "tanh")},
        "rope_qk": {"inputs": rope_inputs, "eager": heads(rope_eager), "liger": heads(liger_rotary_pos_emb),
                    "zoo": heads(kz.rope_qk)},
        "cross_entropy": {"inputs": lambda: (rnd(LOSS_TOKENS, VOCAB, scale=2.0), targets(LOSS_TOKENS, VOCAB)),
                          "eager": lambda z, t: F.cross_entropy(z.float(), t),
                          "liger": lambda z, t: lf.liger_cross_entropy(z, t),
                          "zoo": lambda z, t: kz.cross_entropy(z, t)},
        "fused_linear_cross_entropy": {
            "inputs": lambda: (rnd(TOKENS, HIDDEN), rnd(VOCAB, HIDDEN, scale=0.02), targets(TOKENS, VOCAB)),
            "eager": flce_eager, "liger": lambda x, w, t: lf.liger_fused_linear_cross_entropy(x, w, t),
            "zoo": lambda x, w, t: kz.fused_linear_cross_entropy(x, w, t)},
        "jsd": {"inputs": lambda: (log_probs(LOSS_TOKENS // 2, VOCAB).requires_grad_(True),
                                   log_probs(LOSS_TOKENS // 2, VOCAB)),
                "eager": jsd_eager, "liger": lambda q, p: lf.liger_jsd(q, p, beta=0.5),
                "zoo": lambda q, p: kz.jsd(q, p, beta=0.5)},
        "kl_div": {"inputs": lambda: (log_probs(LOSS_TOKENS // 2, VOCAB).requires_grad_(True),
                                      log_probs(LOSS_TOKENS // 2, VOCAB).exp()),
                   "eager": lambda lq, p: F.kl_div(lq.float(), p.float(), reduction="batchmean"),
                   "liger": lambda lq, p: lf.liger_kl_div(lq, p, reduction="batchmean"),
                   "zoo": lambda lq, p: kz.kl_div_loss(lq, p).sum() / lq.shape[0]},
    }


def _outs(y: Any) -> list[torch.Tensor]:
    return [t for t in (y if isinstance(y, (tuple, list)) else (y,)) if isinstance(t, torch.Tensor)]


def _grad_inputs(args: tuple) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]


def _run_full(fn: Callable, args: tuple, dys: list[torch.Tensor]) -> list[torch.Tensor]:
    outs = _outs(fn(*args))
    torch.autograd.backward(outs, dys[:len(outs)])
    return outs


def _max_diff(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max((float((x.float() - y.float()).abs().max()) for x, y in zip(a, b, strict=True)), default=0.0)


def _measure(fn: Callable, args: tuple, dys: list[torch.Tensor], ref_outs: list[torch.Tensor],
             ref_grads: tuple, reps: int) -> dict[str, Any]:
    """One implementation of one op: differences to eager (outputs and input gradients of the first call, on
    inputs no call has touched), fwd and fwd+bwd ms, peak memory of a fwd+bwd."""
    from cudal1.kernelzoo.bench_timer import time_ms

    gin = _grad_inputs(args)
    dy_copies = [d.clone() for d in dys]  # Liger's in-place backward writes into the output gradient

    def reset() -> None:
        for a in gin:
            a.grad = None
        for d, src in zip(dy_copies, dys, strict=True):
            d.copy_(src)

    rec: dict[str, Any] = {}
    reset()
    outs = _run_full(fn, args, dy_copies)
    rec["max_diff_out"] = _max_diff([o.detach() for o in outs], [o.detach() for o in ref_outs])
    rec["max_diff_grad"] = _max_diff([a.grad if a.grad is not None else torch.zeros_like(a) for a in gin],
                                     list(ref_grads))
    del outs
    rec["fwd_ms"] = time_ms(lambda: fn(*args), reps=reps)
    rec["full_ms"] = time_ms(lambda: _run_full(fn, args, dy_copies), reps=reps, setup=reset)
    reset()
    gc.collect()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    _run_full(fn, args, dy_copies)
    torch.cuda.synchronize()
    rec["peak_mb"] = (torch.cuda.max_memory_allocated() - base) / 2**20
    reset()
    return rec


def bench_op(case: dict[str, Any], reps: int, name: str) -> dict[str, Any]:
    """Every implementation of one op on its own fresh copy of the same inputs (Liger's kernels write into their
    inputs: its swiglu/geglu backward over gate and up, its cross-entropy over the logits, its RoPE over q and k)."""
    def fresh() -> tuple:
        torch.manual_seed(0)
        return case["inputs"]()

    args = fresh()
    ref_outs = [o.detach() for o in _outs(case["eager"](*args))]
    torch.manual_seed(1)
    dys = [torch.randn_like(o) if o.dim() else torch.ones_like(o) for o in ref_outs]
    outs = _outs(case["eager"](*args))
    ref_grads = tuple(g.detach() for g in torch.autograd.grad(outs, _grad_inputs(args), dys))
    del args, outs
    impls = {"eager": case["eager"], "compile": torch.compile(case["eager"], dynamic=False),
             "liger": case["liger"], "zoo": case["zoo"]}
    row: dict[str, Any] = {}
    for impl, fn in impls.items():
        args = fresh()
        try:
            rec = _measure(fn, args, dys, ref_outs, ref_grads, reps)
        except Exception as e:  # noqa: BLE001 - a failing implementation is a result, recorded
            rec = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            traceback.print_exc()
        del args
        gc.collect()
        torch.cuda.empty_cache()
        row[impl] = rec
        log(f"{name:<28} {impl:<8} " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                                for k, v in rec.items()))
    return row


def bench_ops(out_path: str, only: list[str] | None, reps: int) -> None:
    results: dict[str, Any] = {"meta": meta(), "ops": {}}
    for name, case in cases().items():
        if only and name not in only:
            continue
        results["ops"][name] = bench_op(case, reps, name)
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)
        gc.collect()
        torch.cuda.empty_cache()


# ----------------------------------------------------------------------------------------------- training step
def train_one(lib: str, layers: int, batch: int, seq: int, steps: int) -> dict[str, Any]:
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=INTER,
                                   num_hidden_layers=layers, num_attention_heads=32, num_key_value_heads=8,
                                   max_position_embeddings=8192, rope_theta=500000.0, torch_dtype=DT,
                                   attn_implementation="sdpa")
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg).to(DT)
    model.train()
    report = None
    if lib == "zoo":
        import cudal1.kernelzoo as kz

        report = kz.patch(model)
        report = {"rms_norm": len(report.rms_norm), "swiglu": len(report.swiglu), "rope": report.rope,
                  "loss": report.loss, "skipped": report.skipped}
    elif lib == "liger":
        from liger_kernel.transformers import apply_liger_kernel_to_llama

        apply_liger_kernel_to_llama(model=model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, VOCAB, (batch, seq), device="cuda", generator=g)
    labels = ids.clone()
    labels[:, : seq // 8] = -100

    def step() -> float:
        out = model(input_ids=ids, labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return out.loss

    from cudal1.kernelzoo.bench_timer import times_ms

    first = float(step())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = sorted(times_ms(step, warmup=0, reps=steps, cold_l2=False))
    ms = times[len(times) // 2]
    return {"lib": lib, "first_loss": first, "step_ms_median": ms, "step_ms_all": times,
            "tokens_per_s": batch * seq / (ms / 1000), "peak_gb": torch.cuda.max_memory_allocated() / 2**30,
            "layers": layers, "batch": batch, "seq": seq, "patched": report}


def bench_train(out_path: str, layers: int, batch: int, seq: int, steps: int) -> None:
    results: dict[str, Any] = {"meta": meta(), "train": {}}
    for lib in ("eager", "zoo", "liger"):
        cmd = [sys.executable, __file__, "train-one", lib, "--layers", str(layers), "--batch", str(batch),
               "--seq", str(seq), "--steps", str(steps)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        results["train"][lib] = json.loads(line[-1][7:]) if line else {"error": p.stderr[-2000:]}
        log(f"train {lib}: {results['train'][lib] if line else p.stderr[-1500:]}")
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)


def meta() -> dict[str, Any]:
    import importlib.metadata as md

    def ver(name: str) -> str | None:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    return {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "triton": ver("triton"), "liger_kernel": ver("liger-kernel"), "transformers": ver("transformers"),
            "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d"),
            "driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True).stdout.strip()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["ops", "train", "train-one"])
    ap.add_argument("lib", nargs="?")
    ap.add_argument("--out", default="liger.json")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=8)
    a = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if a.what == "ops":
        bench_ops(a.out, a.only, a.reps)
    elif a.what == "train":
        bench_train(a.out, a.layers, a.batch, a.seq, a.steps)
    else:
        print("RESULT " + json.dumps(train_one(a.lib, a.layers, a.batch, a.seq, a.steps)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
