"""Multi-layer LSTM and GRU inference forwards with the time recurrence in one persistent Triton kernel per layer
(KernelBench level 3's LSTM / GRU tasks: batch 10, 512 steps, hidden 256, 6 layers, fp32).

Why: cuDNN's standard RNN forward launches a small GEMM and an elementwise kernel for every time step of every
layer (6 144 launches for 6 layers x 512 steps), each a few microseconds of mostly idle GPU. Here each layer is

1. one cuBLAS GEMM for the input projections of all time steps and both directions
   (``xp = x @ W_ih^T + b``; the time-parallel part of the layer),
2. one persistent Triton launch for the recurrence: ``grid = (H / BH, directions)``; program ``(p, d)`` owns hidden
   units ``[p*BH, (p+1)*BH)`` of direction ``d``, keeps its rows of ``W_hh`` (all gates) and its cell state in
   registers for the whole sequence, and per step computes its gates from the full previous hidden state, writes
   its slice of ``h_t`` straight into the layer's output sequence, and signals a per-direction step counter
   (release); before the next step it waits until every program of its direction has signalled (acquire) and reads
   ``h_t`` back from the output. All ``H / BH * directions`` programs must be resident at once (16-32 programs here,
   far below the SM count; the wrapper checks it against the device).

Numerics: fp32 throughout (``tl.dot(..., input_precision="ieee")``, no TF32); the same gate equations as
``torch.nn.LSTM`` (gate order i, f, g, o; ``c' = f*c + i*g``, ``h' = o*tanh(c')``) and ``torch.nn.GRU`` (r, z, n;
``n = tanh(W_in x + b_in + r*(W_hn h + b_hn))``, ``h' = (1-z)*n + z*h``); only the summation order differs.

Off CUDA (and with gradients enabled) :func:`lstm_forward` / :func:`gru_forward` compute the same recurrence in
PyTorch ops step by step (the CPU reference the tests compare the kernels with under ``TRITON_INTERPRET=1``).
Inference only: no backward.
"""

from __future__ import annotations

import torch
from torch import nn

from cudal1.kernelzoo._triton import tl, triton

__all__ = ["gru_forward", "lstm_forward"]


@triton.jit
def _wait_step(cnt_ptr, target):
    """Spin until the step counter at ``cnt_ptr`` reaches ``target`` (acquire: the writes signalled before it are
    visible to this program's later loads)."""
    while tl.atomic_add(cnt_ptr, 0, sem="acquire", scope="gpu") < target:
        pass


@triton.jit
def _signal_step(cnt_ptr):
    """Every thread's stores of this step are done (CTA barrier), then one release increment of the counter."""
    tl.debug_barrier()
    tl.atomic_add(cnt_ptr, 1, sem="release", scope="gpu")


@triton.jit
def _gate_matmul(h, w, BH: tl.constexpr):
    """``h @ w^T`` for h (BB, H) and w (BH, H), fp32 exact (no TF32)."""
    if BH >= 16:
        return tl.dot(h, tl.trans(w), input_precision="ieee")
    else:
        return tl.sum(h[:, None, :] * w[None, :, :], axis=2)


@triton.jit
def _lstm_layer_kernel(xp_ptr, whh_ptr, h0_ptr, c0_ptr, out_ptr, hn_ptr, cn_ptr, cnt_ptr,
                       B, T, s_xb, s_xt, s_ob, s_ot,
                       H: tl.constexpr, BB: tl.constexpr, BH: tl.constexpr):
    """One LSTM layer's recurrence. xp: (.., 4H per direction) input projections with both biases, element
    (b, t, d*4H + g*H + j) at ``b*s_xb + t*s_xt + d*4H + g*H + j``; whh: (D, 4H, H) contiguous; h0, c0, hn, cn:
    (D, B, H) contiguous; out: element (b, t, d*H + j) at ``b*s_ob + t*s_ot + d*H + j``; cnt: (D,) int32 zeros."""
    p = tl.program_id(0)
    d = tl.program_id(1)
    nprog = tl.num_programs(0)
    units = p * BH + tl.arange(0, BH)
    k = tl.arange(0, H)
    b = tl.arange(0, BB)
    bm = b < B
    m2 = bm[:, None]
    wb = whh_ptr + d * (4 * H * H) + units[:, None] * H + k[None, :]
    w_i = tl.load(wb)
    w_f = tl.load(wb + H * H)
    w_g = tl.load(wb + 2 * H * H)
    w_o = tl.load(wb + 3 * H * H)
    st = d * B * H + b[:, None] * H
    h = tl.load(h0_ptr + st + k[None, :], mask=m2, other=0.0)
    c = tl.load(c0_ptr + st + units[None, :], mask=m2, other=0.0)
    hn = tl.zeros((BB, BH), dtype=tl.float32)
    cnt = cnt_ptr + d
    for s in range(T):
        t = s + d * (T - 1 - 2 * s)  # forward: s; reverse: T-1-s
        xb = xp_ptr + b[:, None] * s_xb + t * s_xt + d * (4 * H) + units[None, :]
        x_i = tl.load(xb, mask=m2, other=0.0)
        x_f = tl.load(xb + H, mask=m2, other=0.0)
        x_g = tl.load(xb + 2 * H, mask=m2, other=0.0)
        x_o = tl.load(xb + 3 * H, mask=m2, other=0.0)
        gi = tl.sigmoid(_gate_matmul(h, w_i, BH) + x_i)
        gf = tl.sigmoid(_gate_matmul(h, w_f, BH) + x_f)
        gg = _gate_matmul(h, w_g, BH) + x_g
        gg = 2.0 * tl.sigmoid(2.0 * gg) - 1.0  # tanh
        go = tl.sigmoid(_gate_matmul(h, w_o, BH) + x_o)
        c = gf * c + gi * gg
        hn = go * (2.0 * tl.sigmoid(2.0 * c) - 1.0)
        ob = out_ptr + b[:, None] * s_ob + t * s_ot + d * H
        tl.store(ob + units[None, :], hn, mask=m2)
        _signal_step(cnt)
        if s + 1 < T:
            _wait_step(cnt, nprog * (s + 1))
            h = tl.load(ob + k[None, :], mask=m2, other=0.0, volatile=True)
    tl.store(hn_ptr + st + units[None, :], hn, mask=m2)
    tl.store(cn_ptr + st + units[None, :], c, mask=m2)


@triton.jit
def _gru_layer_kernel(xp_ptr, whh_ptr, bhh_ptr, h0_ptr, out_ptr, hn_ptr, cnt_ptr,
                      B, T, s_xb, s_xt, s_ob, s_ot,
                      H: tl.constexpr, BB: tl.constexpr, BH: tl.constexpr):
    """One GRU layer's recurrence. xp: input projections with b_ih (3H per direction, layout as in the LSTM
    kernel); whh: (D, 3H, H); bhh: (D, 3H); h0, hn: (D, B, H); out as in the LSTM kernel; cnt: (D,) int32 zeros."""
    p = tl.program_id(0)
    d = tl.program_id(1)
    nprog = tl.num_programs(0)
    units = p * BH + tl.arange(0, BH)
    k = tl.arange(0, H)
    b = tl.arange(0, BB)
    bm = b < B
    m2 = bm[:, None]
    wb = whh_ptr + d * (3 * H * H) + units[:, None] * H + k[None, :]
    w_r = tl.load(wb)
    w_z = tl.load(wb + H * H)
    w_n = tl.load(wb + 2 * H * H)
    bb = bhh_ptr + d * (3 * H) + units
    b_r = tl.load(bb)[None, :]
    b_z = tl.load(bb + H)[None, :]
    b_n = tl.load(bb + 2 * H)[None, :]
    st = d * B * H + b[:, None] * H
    h = tl.load(h0_ptr + st + k[None, :], mask=m2, other=0.0)
    hu = tl.load(h0_ptr + st + units[None, :], mask=m2, other=0.0)  # this program's slice of h
    cnt = cnt_ptr + d
    for s in range(T):
        t = s + d * (T - 1 - 2 * s)
        xb = xp_ptr + b[:, None] * s_xb + t * s_xt + d * (3 * H) + units[None, :]
        x_r = tl.load(xb, mask=m2, other=0.0)
        x_z = tl.load(xb + H, mask=m2, other=0.0)
        x_n = tl.load(xb + 2 * H, mask=m2, other=0.0)
        r = tl.sigmoid(_gate_matmul(h, w_r, BH) + b_r + x_r)
        z = tl.sigmoid(_gate_matmul(h, w_z, BH) + b_z + x_z)
        n = x_n + r * (_gate_matmul(h, w_n, BH) + b_n)
        n = 2.0 * tl.sigmoid(2.0 * n) - 1.0  # tanh
        hu = (1.0 - z) * n + z * hu
        ob = out_ptr + b[:, None] * s_ob + t * s_ot + d * H
        tl.store(ob + units[None, :], hu, mask=m2)
        _signal_step(cnt)
        if s + 1 < T:
            _wait_step(cnt, nprog * (s + 1))
            h = tl.load(ob + k[None, :], mask=m2, other=0.0, volatile=True)
    tl.store(hn_ptr + st + units[None, :], hu, mask=m2)


def _block_h(hidden: int) -> int:
    """Hidden units per program: 16 (tensor-core-free ``tl.dot`` tiles need >= 16), fewer for tiny layers."""
    return min(16, hidden)


def _check_launch(hidden: int, directions: int, bh: int, device: torch.device) -> None:
    if hidden & (hidden - 1) or hidden % bh:
        raise ValueError(f"recurrent kernels need a power-of-two hidden size, got {hidden}; use torch.nn.LSTM/GRU")
    programs = hidden // bh * directions
    if device.type != "cuda":  # the Triton interpreter runs programs one after another
        return
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    if programs > sms:  # the step barrier needs every program resident at once
        raise ValueError(f"{programs} recurrent programs exceed the {sms} SMs of {device}: hidden size too large")


def _layer_weights(rnn: nn.RNNBase, layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(W_ih of all directions (D*G*H, in), b_ih (D*G*H,), W_hh (D, G*H, H), b_hh (D, G*H)) of one layer, read from
    the live parameters (zeros where the module has no bias)."""
    sfx = ["", "_reverse"][: 2 if rnn.bidirectional else 1]
    w_ih = [getattr(rnn, f"weight_ih_l{layer}{s}") for s in sfx]
    w_hh = [getattr(rnn, f"weight_hh_l{layer}{s}") for s in sfx]
    if rnn.bias:
        b_ih = [getattr(rnn, f"bias_ih_l{layer}{s}") for s in sfx]
        b_hh = [getattr(rnn, f"bias_hh_l{layer}{s}") for s in sfx]
    else:
        b_ih = [torch.zeros_like(w[:, 0]) for w in w_ih]
        b_hh = [torch.zeros_like(w[:, 0]) for w in w_hh]
    cat = (lambda ts: ts[0]) if len(sfx) == 1 else torch.cat
    return cat(w_ih), cat(b_ih), torch.stack(w_hh), torch.stack(b_hh)


def _run_layers(rnn: nn.RNNBase, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor | None,
                block_h: int | None = None, num_warps: int = 4
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Every layer on CUDA: input projection GEMM, then the recurrence kernel. Returns (output, h_n, c_n).
    ``block_h`` (hidden units per program) and ``num_warps`` are the launch config (default: :func:`_block_h`, 4)."""
    lstm = c0 is not None
    hidden = rnn.hidden_size
    dirs = 2 if rnn.bidirectional else 1
    bi, ti = (0, 1) if rnn.batch_first else (1, 0)
    batch, steps = x.shape[bi], x.shape[ti]
    bh = block_h or _block_h(hidden)
    _check_launch(hidden, dirs, bh, x.device)
    h0 = h0.contiguous()
    c0 = c0.contiguous() if lstm else None
    hn = torch.empty(rnn.num_layers * dirs, batch, hidden, device=x.device, dtype=x.dtype)
    cn = torch.empty_like(hn) if lstm else None
    counters = torch.zeros(rnn.num_layers, dirs, device=x.device, dtype=torch.int32)
    inp = x
    for layer in range(rnn.num_layers):
        w_ih, b_ih, w_hh, b_hh = _layer_weights(rnn, layer)
        if lstm:  # both biases go into the projection
            b_ih = b_ih + b_hh.reshape(-1)
        xp = torch.addmm(b_ih, inp.reshape(-1, inp.shape[-1]), w_ih.t()).view(*inp.shape[:2], -1)
        out = torch.empty(*inp.shape[:2], dirs * hidden, device=x.device, dtype=x.dtype)
        sl = slice(layer * dirs, (layer + 1) * dirs)
        grid = (hidden // bh, dirs)
        common = (batch, steps, xp.stride(bi), xp.stride(ti), out.stride(bi), out.stride(ti))
        if lstm:
            _lstm_layer_kernel[grid](xp, w_hh.contiguous(), h0[sl], c0[sl], out, hn[sl], cn[sl], counters[layer],
                                     *common, H=hidden, BB=max(16, triton.next_power_of_2(batch)), BH=bh,
                                     num_warps=num_warps)
        else:
            _gru_layer_kernel[grid](xp, w_hh.contiguous(), b_hh.contiguous(), h0[sl], out, hn[sl], counters[layer],
                                    *common, H=hidden, BB=max(16, triton.next_power_of_2(batch)), BH=bh,
                                    num_warps=num_warps)
        inp = out
    return inp, hn, cn


def _reference_layers(rnn: nn.RNNBase, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor | None
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The same recurrence in PyTorch ops, step by step (CPU, or with gradients enabled)."""
    lstm = c0 is not None
    dirs = 2 if rnn.bidirectional else 1
    seq = x if rnn.batch_first else x.transpose(0, 1)  # (B, T, F)
    hns, cns = [], []
    for layer in range(rnn.num_layers):
        w_ih, b_ih, w_hh, b_hh = _layer_weights(rnn, layer)
        xp = seq @ w_ih.t() + b_ih
        outs = []
        for d in range(dirs):
            g = w_hh.shape[1]
            xd = xp[..., d * g:(d + 1) * g]
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if lstm else None
            hs = []
            order = range(seq.shape[1]) if d == 0 else range(seq.shape[1] - 1, -1, -1)
            for t in order:
                hh = h @ w_hh[d].t() + b_hh[d]
                if lstm:
                    i, f, gg, o = (xd[:, t] + hh).chunk(4, dim=1)
                    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
                    h = torch.sigmoid(o) * torch.tanh(c)
                else:
                    xr, xz, xn = xd[:, t].chunk(3, dim=1)
                    hr, hz, hn_ = hh.chunk(3, dim=1)
                    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                    h = (1 - z) * torch.tanh(xn + r * hn_) + z * h
                hs.append(h)
            if d == 1:
                hs.reverse()
            outs.append(torch.stack(hs, dim=1))
            hns.append(h)
            if lstm:
                cns.append(c)
        seq = torch.cat(outs, dim=-1) if dirs == 2 else outs[0]
    out = seq if rnn.batch_first else seq.transpose(0, 1)
    return out, torch.stack(hns), (torch.stack(cns) if lstm else None)


def _use_kernels(x: torch.Tensor) -> bool:
    return x.is_cuda and x.dtype == torch.float32 and not torch.is_grad_enabled()


def lstm_forward(lstm: nn.LSTM, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``lstm(x, (h0, c0))`` in inference: returns (output, h_n, c_n) with the module's own shapes.

    Args:
        lstm: an ``nn.LSTM`` (any layers, batch_first or not, uni- or bidirectional, no projections).
        x: (B, T, F) if ``lstm.batch_first`` else (T, B, F), fp32.
        h0, c0: (layers * directions, B, H).
    """
    if lstm.proj_size:
        raise ValueError("lstm_forward does not implement LSTM projections (proj_size > 0)")
    if _use_kernels(x):
        out, hn, cn = _run_layers(lstm, x, h0, c0)
    else:
        out, hn, cn = _reference_layers(lstm, x, h0, c0)
    assert cn is not None
    return out, hn, cn


def gru_forward(gru: nn.GRU, x: torch.Tensor, h0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``gru(x, h0)`` in inference: returns (output, h_n) with the module's own shapes (shapes as in
    :func:`lstm_forward`)."""
    if _use_kernels(x):
        out, hn, _ = _run_layers(gru, x, h0, None)
    else:
        out, hn, _ = _reference_layers(gru, x, h0, None)
    return out, hn
