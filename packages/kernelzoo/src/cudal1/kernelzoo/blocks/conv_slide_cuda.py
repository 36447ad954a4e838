"""Unit-stride 2-D / 3-D convolution with many input channels as a direct convolution in CUDA C whose threads slide
a register window along the row: fp32 FMA (no TF32), launched through ``cuda_jit.run`` (the driver's
``cuLaunchKernel``). Written for the stride-1 transposed convolutions of KernelBench level 1 (57, 65, 69, 71, 78:
32 -> 64 channels, 3 x 3 or 3 x 5 taps; 68 in 3-D), which cuDNN (fp32, no TF32) and the Triton implicit GEMM of
:mod:`.conv_transpose` run at 4-19 TFMA/s on an H100 against its ~33 TFMA/s of FP32 FMA; the solution of ``78`` uses
it (``Tile(rb=2)``).

What the probe measured (``benchmarks/scripts/probe_conv_slide.py``, H100, 2026-11-28, sixteenth pass): it did not
get closer to the FMA rate than the Triton kernel. On 78 (3 x 5 taps, rows of 256) two rows a block ran at 18.6
TFMA/s back to back against Triton's 18.3 and, timed as the harness times a call, 0.93-0.97 ms against Triton's
1.04-1.25 and eager's 1.03-1.40; on 69 1.05x eager timed so; on 57 / 71 (rows of 130 / 258, 3 x 3) 10-11 TFMA/s
against Triton's 17-18; on 65 12 against 18; on 68 (3-D) 14 against 19. Sixteen columns a thread (128
accumulators, 8 warps a multiprocessor) ran 5-50% slower than eight.

A stride-1 transposed convolution is a forward convolution of the same input with the weight flipped along every
spatial axis and its two channel axes swapped, padded by ``d (k - 1) - p`` on each side (output padding 0): the
kernel reads the transposed weight that way in place (``TRANSPOSED``), nothing is formed per call.

Layout. A thread owns 8 consecutive output columns of one output row and 8 output channels (``4 c .. 4 c + 3`` and
``32 + 4 c ..``: the 8 lanes of a quarter warp read 128 contiguous bytes of weights, no bank conflict); a block owns
``RB`` rows x ``SEG`` columns (``SEG / 8`` column groups a row) x 64 channels. The reduction runs over chunks of
``CC`` input channels, each staged in shared memory by ``cp.async`` (zero-filled outside the input: the padding
costs nothing) in a ring of ``STAGES`` buffers: the ``RB + (KH - 1) DH`` input rows (per depth tap) of the chunk
the block's rows read, ``SEG + (KW - 1) DW`` columns each, and the chunk's weights as ``[ci][tap][64]``. Per
(input channel, depth tap, row tap) a thread loads its window of ``8 + (KW - 1) DW`` inputs (16-byte shared loads,
every lane of a quarter warp the same address) and then, per column tap, two 16-byte weight loads and 64 FMAs: 8
window values x 8 channels, the window shifted by the tap. Stores: 16-, 8- or 4-byte (by the row length),
evict-first (``__stcs``: the output is written once).

Needs: fp32, one group, unit stride, a multiple of 64 output channels, and the shared memory of one stage ring
within :data:`SMEM_BUDGET`; :func:`conv_transpose` falls back to :func:`.conv_transpose.conv_transpose` (Triton on
CUDA, PyTorch elsewhere) for everything else.

x: (N, Cin, [D,] H, W) float32 CUDA; forward weight (Cout, Cin, [KD,] KH, KW), transposed weight (Cin, Cout, [KD,]
KH, KW); returns (N, Cout, [OD,] OH, OW) float32.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from .. import cuda_jit
from ..kernel_specs import CudaSource
from . import conv_transpose as convt_triton

__all__ = ["DEFAULT_TILE", "SMEM_BUDGET", "Tile", "conv_slide", "conv_transpose", "slide_source", "supported"]

_TEMPLATE = r"""
#define NQ (SEG / PX)
#define NT (NQ * RB * 8)
#define XR (RB + (KH - 1) * DH)
#define WIN (PX + (KW - 1) * DW)
#define WIN4 ((WIN + 3) / 4 * 4)
#define SEGW (SEG + WIN4 - PX)
#define TAPS (KD * KH * KW)
#define XROWS (CC * KD * XR)
#define XS_STAGE (XROWS * SEGW)
#define WS_STAGE (CC * TAPS * 64)
#define STAGE (XS_STAGE + WS_STAGE)
#define NCHUNK ((CIN + CC - 1) / CC)

__device__ __forceinline__ void cp4(float* dst, const float* src, bool ok) {
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }

// stage input channels [ci0, ci0 + CC) into ring buffer `buf`
__device__ __forceinline__ void load_chunk(float* smem, int buf, int ci0, const float* __restrict__ xn,
                                           const float* __restrict__ w, int od, int oh0, int ow0, int co0, int t) {
    float* xs = smem + buf * STAGE;
    float* ws = xs + XS_STAGE;
#pragma unroll 1
    for (int rr = 0; rr < XROWS; ++rr) {
        const int xr = rr % XR, kd = (rr / XR) % KD, cc = rr / (XR * KD);
        const int ci = ci0 + cc, id = od + kd * DD - PD, ih = oh0 + xr - PH;
        const bool rowok = ci < CIN && id >= 0 && id < ID && ih >= 0 && ih < IH;
        const float* src = xn + (((long long)ci * ID + id) * IH + ih) * IW;
        for (int col = t; col < SEGW; col += NT) {
            const int iw = ow0 + col - PW;
            const bool ok = rowok && iw >= 0 && iw < IW;
            cp4(xs + rr * SEGW + col, ok ? src + iw : xn, ok);
        }
    }
    for (int i = t; i < WS_STAGE; i += NT) {
        const int j = i & 63, rest = i >> 6, tap = rest % TAPS, cc = rest / TAPS;
        const int ci = ci0 + cc, co = co0 + j;
        const bool ok = ci < CIN && co < COUT;
#if TRANSPOSED
        const long long wi = ((long long)ci * COUT + co) * TAPS + (TAPS - 1 - tap);  // flipped along every axis
#else
        const long long wi = ((long long)co * CIN + ci) * TAPS + tap;
#endif
        cp4(ws + i, ok ? w + wi : w, ok);
    }
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
conv_slide(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
           float* __restrict__ y)
{
    extern __shared__ __align__(16) float smem[];
    int b = blockIdx.x;
    const int seg = b % NSEG; b /= NSEG;
    const int oht = b % OHT; b /= OHT;
    const int od = b % OD; b /= OD;
    const int cot = b % COT;
    const int n = b / COT;
    const int oh0 = oht * RB, ow0 = seg * SEG, co0 = cot * 64;
    const int t = threadIdx.x, cg = t & 7, q = t >> 3, r = q / NQ, g = q - r * NQ;
    const float* xn = x + (long long)n * CIN * ID * IH * IW;

    float acc[PX][8];
#pragma unroll
    for (int i = 0; i < PX; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < NCHUNK) load_chunk(smem, s, s * CC, xn, w, od, oh0, ow0, co0, t);
        cp_commit();
    }
#pragma unroll 1
    for (int c = 0; c < NCHUNK; ++c) {
        cp_wait<STAGES - 2>();
        __syncthreads();  // chunk c is in; every thread is done with the buffer refilled next
        {
            const int nc = c + STAGES - 1;
            if (nc < NCHUNK) load_chunk(smem, nc % STAGES, nc * CC, xn, w, od, oh0, ow0, co0, t);
            cp_commit();
        }
        const float* xs = smem + (c % STAGES) * STAGE;
        const float* ws = xs + XS_STAGE + cg * 4;
#pragma unroll 1
        for (int cc = 0; cc < CC; ++cc) {
#pragma unroll KD_UNROLL_N
            for (int kd = 0; kd < KD; ++kd) {
#pragma unroll
                for (int kh = 0; kh < KH; ++kh) {
                    const float* row = xs + ((cc * KD + kd) * XR + r + kh * DH) * SEGW + g * PX;
                    float a[WIN4];
#pragma unroll
                    for (int v = 0; v < WIN4 / 4; ++v) {
                        const float4 u = *reinterpret_cast<const float4*>(row + 4 * v);
                        a[4 * v] = u.x; a[4 * v + 1] = u.y; a[4 * v + 2] = u.z; a[4 * v + 3] = u.w;
                    }
#pragma unroll
                    for (int kw = 0; kw < KW; ++kw) {
                        const float* wp = ws + ((cc * KD + kd) * KH * KW + kh * KW + kw) * 64;
                        const float4 b0 = *reinterpret_cast<const float4*>(wp);
                        const float4 b1 = *reinterpret_cast<const float4*>(wp + 32);
#pragma unroll
                        for (int i = 0; i < PX; ++i) {
                            const float av = a[i + kw * DW];
                            acc[i][0] = fmaf(av, b0.x, acc[i][0]); acc[i][1] = fmaf(av, b0.y, acc[i][1]);
                            acc[i][2] = fmaf(av, b0.z, acc[i][2]); acc[i][3] = fmaf(av, b0.w, acc[i][3]);
                            acc[i][4] = fmaf(av, b1.x, acc[i][4]); acc[i][5] = fmaf(av, b1.y, acc[i][5]);
                            acc[i][6] = fmaf(av, b1.z, acc[i][6]); acc[i][7] = fmaf(av, b1.w, acc[i][7]);
                        }
                    }
                }
            }
        }
    }
    cp_wait<0>();

    const int oh = oh0 + r, ow = ow0 + g * PX;
    if (oh >= OH || ow >= OW) return;
    float* yb = y + (((long long)n * COUT + co0) * OD + od) * OH * OW + (long long)oh * OW + ow;
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
        const int j = jj < 4 ? cg * 4 + jj : 32 + cg * 4 + (jj - 4);
        if (co0 + j >= COUT) continue;
        const float bv = HAS_BIAS ? bias[co0 + j] : 0.f;
        float* yr = yb + (long long)j * OD * OH * OW;
#if VW == 4
#pragma unroll
        for (int v = 0; v < PX / 4; ++v)
            if (ow + 4 * v < OW)
                STORE(reinterpret_cast<float4*>(yr + 4 * v),
                      make_float4(acc[4 * v][jj] + bv, acc[4 * v + 1][jj] + bv, acc[4 * v + 2][jj] + bv,
                                  acc[4 * v + 3][jj] + bv));
#elif VW == 2
#pragma unroll
        for (int v = 0; v < PX / 2; ++v)
            if (ow + 2 * v < OW)
                STORE(reinterpret_cast<float2*>(yr + 2 * v), make_float2(acc[2 * v][jj] + bv, acc[2 * v + 1][jj] + bv));
#else
#pragma unroll
        for (int i = 0; i < PX; ++i)
            if (ow + i < OW) STORE(yr + i, acc[i][jj] + bv);
#endif
    }
}
"""

#: the most shared memory a block's stage ring may take: what one block may have on every family the zoo compiles for
#: (sm86 / sm89: 99 KB)
SMEM_BUDGET = 99 * 1024
#: output columns a thread computes (a 64-accumulator tile of 8 columns x 8 channels; 16 columns, 128 accumulators
#: at up to 255 registers and 8 warps a multiprocessor, measured 5-50% slower on the six tasks' shapes)
PX = 8
#: shared memory of an sm90 multiprocessor that blocks may share (the family the tiles are picked for)
SMEM_PER_SM = 227 * 1024
#: registers a thread gets (64 accumulators, a 12-value window, 8 weights and addresses) from the block count promised
#: to the compiler (``__launch_bounds__``), out of a multiprocessor's 65536
REGISTERS = 128
#: threads a block aims at (when the grid fills every multiprocessor twice)
BLOCK_THREADS = 256


@dataclass(frozen=True)
class Tile:
    """A block's work: ``cc`` input channels a stage (None: the most of 8, 4, 2, 1 whose ring fits), ``stages``
    buffers in the ring, ``rb`` output rows (None: one for rows of 128 columns or more, else as many as make about
    256 threads, fewer if the grid would not fill every multiprocessor twice), row segments of at most ``seg_max``
    columns; ``minb`` blocks a multiprocessor promised to the compiler (None: as many as 512 threads hold, at most
    8); evict-first (``streaming``) or plain stores."""

    cc: int | None = None
    stages: int = 3
    rb: int | None = None
    seg_max: int = 256
    minb: int | None = None
    streaming: bool = True

    def __post_init__(self) -> None:
        if self.stages < 2 or min(self.cc or 1, self.rb or 1, self.minb or 1) <= 0 or self.seg_max < PX:
            raise ValueError(f"tile {self}: stages >= 2; cc, rb, minb positive; seg_max >= {PX}")


DEFAULT_TILE = Tile()


def _ints(v, nd: int) -> tuple[int, ...]:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    if len(t) != nd:
        raise ValueError(f"expected {nd} values (one per spatial dimension), got {t}")
    return tuple(int(e) for e in t)


def _stage_floats(cc: int, kd: int, kh: int, kw: int, rb: int, seg: int, dh: int, dw: int) -> int:
    """Floats of one ring buffer: the input rows of ``cc`` channels and their weights."""
    win4 = -(-(PX + (kw - 1) * dw) // 4) * 4
    return cc * kd * (rb + (kh - 1) * dh) * (seg + win4 - PX) + cc * kd * kh * kw * 64


@functools.lru_cache(maxsize=64)
def slide_source(n: int, cin: int, cout: int, spatial: tuple[int, int, int], kernel: tuple[int, int, int],
                 padding: tuple[int, int, int], dilation: tuple[int, int, int], transposed: bool, has_bias: bool,
                 tile: Tile = DEFAULT_TILE, multiprocessors: int = 132
                 ) -> tuple[CudaSource, tuple[int, int, int], int, int, int]:
    """The CUDA source for one shape (everything compiled in; 2-D as depth 1), its output size (OD, OH, OW), the
    grid (blocks), the block (threads) and the dynamic shared memory (bytes). ``padding``: the forward
    convolution's, per side (negative crops). ``multiprocessors``: the device's count (fewer rows a block when the
    grid would not fill every multiprocessor twice)."""
    (kd, kh, kw), (dd, dh, dw) = kernel, dilation
    if cout % 64:
        raise ValueError(f"conv_slide computes 64 output channels a block, got {cout}: use conv_transpose's Triton "
                         f"kernel or F.conv*d")
    od, oh, ow = (i + 2 * p - d * (k - 1) for i, k, p, d in zip(spatial, kernel, padding, dilation, strict=True))
    if min(od, oh, ow) <= 0:
        raise ValueError(f"convolution output size {(od, oh, ow)} is empty for input {spatial}, kernel {kernel}")
    nseg = -(-ow // tile.seg_max)
    seg = -(-(-(-ow // nseg)) // PX) * PX
    rows = n * od * oh
    row_threads = seg // PX * 8
    rb = tile.rb or max(1, min(BLOCK_THREADS // row_threads, rows * nseg // (2 * multiprocessors)))
    rb = min(rb, oh)
    threads = row_threads * rb
    lanes = -(-threads // 32) * 32
    if lanes * REGISTERS > 65536:
        raise ValueError(f"tile {tile}: {rb} rows x {seg} columns is {threads} threads a block, more than one "
                         f"multiprocessor holds at {REGISTERS} registers a thread: take fewer rows or shorter "
                         f"segments")
    minb = tile.minb or max(1, min(8, 65536 // (lanes * REGISTERS)))
    budget = min(SMEM_BUDGET, SMEM_PER_SM // minb)
    cc = tile.cc or next((c for c in (8, 4, 2) if tile.stages * _stage_floats(c, kd, kh, kw, rb, seg, dh, dw) * 4
                          <= budget), 1)
    smem = tile.stages * _stage_floats(cc, kd, kh, kw, rb, seg, dh, dw) * 4
    if smem > SMEM_BUDGET:
        raise ValueError(f"{smem} bytes of shared memory for tile {tile} ({kernel} taps, {seg} columns x {rb} rows) "
                         f"exceed {SMEM_BUDGET}: take fewer input channels a stage, fewer stages or rows")
    oht = -(-oh // rb)
    vw = 4 if ow % 4 == 0 else 2 if ow % 2 == 0 else 1
    consts = dict(PX=PX, CIN=cin, COUT=cout, ID=spatial[0], IH=spatial[1], IW=spatial[2], OD=od, OH=oh, OW=ow, KD=kd,
                  KH=kh, KW=kw, PD=padding[0], PH=padding[1], PW=padding[2], DD=dd, DH=dh, DW=dw,
                  TRANSPOSED=int(transposed), HAS_BIAS=int(has_bias), CC=cc, STAGES=tile.stages, RB=rb, SEG=seg,
                  NSEG=nseg, OHT=oht, COT=cout // 64, MINB=minb, VW=vw,
                  STORE="__stcs" if tile.streaming else "_st")
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    head += "template <typename T> __device__ __forceinline__ void _st(T* p, T v) { *p = v; }\n"
    name = "conv_slide_" + "_".join(str(v) for v in consts.values())
    grid = n * (cout // 64) * od * oht * nseg
    code = head + _TEMPLATE.replace("KD_UNROLL_N", "1" if kd > 1 else "")  # a depth loop stays rolled (code size)
    return CudaSource(name, code, ("conv_slide",)), (od, oh, ow), grid, threads, smem


@functools.lru_cache(maxsize=16)
def _multiprocessors(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def conv_slide(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, padding=0, dilation=1,
               transposed: bool = False, tile: Tile = DEFAULT_TILE) -> torch.Tensor:
    """The CUDA kernel, unconditionally: the unit-stride forward convolution of ``x`` (N, Cin, [D,] H, W) fp32 CUDA
    with ``weight`` (Cout, Cin, [KD,] KH, KW), or with the flipped, channel-swapped ``weight`` (Cin, Cout, [KD,]
    KH, KW) if ``transposed``; ``padding`` (forward, per side; may be negative) and ``dilation``: an int or one per
    spatial dimension. Returns (N, Cout, [OD,] OH, OW) fp32."""
    nd = x.dim() - 2
    if nd not in (2, 3) or weight.dim() != x.dim():
        raise ValueError(f"conv_slide is 2-D or 3-D: x {tuple(x.shape)}, weight {tuple(weight.shape)}")
    cin, cout = (weight.shape[0], weight.shape[1]) if transposed else (weight.shape[1], weight.shape[0])
    if cin != x.shape[1]:
        raise ValueError(f"weight {tuple(weight.shape)} is for {cin} input channels, x {tuple(x.shape)} has "
                         f"{x.shape[1]} (one group only)")
    pad = (0,) * (3 - nd) + _ints(padding, nd)
    dil = (1,) * (3 - nd) + _ints(dilation, nd)
    spatial = (1,) * (3 - nd) + tuple(x.shape[2:])
    kernel = (1,) * (3 - nd) + tuple(weight.shape[2:])
    x, weight = x.contiguous(), weight.contiguous()
    src, out, grid, threads, smem = slide_source(x.shape[0], cin, cout, spatial, kernel, pad, dil, transposed,
                                                 bias is not None, tile, _multiprocessors(x.device))
    y = torch.empty((x.shape[0], cout) + out[3 - nd:], device=x.device, dtype=torch.float32)
    cuda_jit.run(src, "conv_slide", (grid,), (threads,), "pppp",
                 (x, weight, bias if bias is not None else weight, y), x.device, shared_mem=smem)
    return y


def supported(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride, padding, output_padding,
              groups: int, dilation) -> bool:
    """Whether :func:`conv_transpose` runs the kernel for these arguments: fp32 CUDA tensors (CuPy installed), 2-D
    or 3-D, one group, unit stride, no output padding, a multiple of 64 output channels, a ring that fits."""
    nd = x.dim() - 2
    if not (x.is_cuda and nd in (2, 3) and weight.dim() == x.dim() and groups == 1 and x.dtype == torch.float32
            and weight.dtype == torch.float32 and (bias is None or bias.dtype == torch.float32)
            and weight.shape[0] == x.shape[1] and weight.shape[1] % 64 == 0 and cuda_jit.cupy_available()):
        return False
    if isinstance(padding, str) or set(_ints(stride, nd)) != {1} or set(_ints(output_padding, nd)) != {0}:
        return False
    k, d, p = tuple(weight.shape[2:]), _ints(dilation, nd), _ints(padding, nd)
    fpad = (0,) * (3 - nd) + tuple(d_ * (k_ - 1) - p_ for k_, d_, p_ in zip(k, d, p, strict=True))
    try:
        slide_source(x.shape[0], x.shape[1], weight.shape[1], (1,) * (3 - nd) + tuple(x.shape[2:]),
                     (1,) * (3 - nd) + k, fpad, (1,) * (3 - nd) + d, True, bias is not None, DEFAULT_TILE,
                     _multiprocessors(x.device))
    except ValueError:
        return False
    return True


def conv_transpose(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                   output_padding=0, groups: int = 1, dilation=1, tile: Tile = DEFAULT_TILE) -> torch.Tensor:
    """Transposed convolution with ``torch.nn.functional.conv_transpose{2,3}d``'s arguments: this kernel where
    :func:`supported` (as the forward convolution with the flipped weight and padding ``d (k - 1) - p``),
    :func:`.conv_transpose.conv_transpose` elsewhere (Triton on CUDA, PyTorch off it)."""
    if not supported(x, weight, bias, stride, padding, output_padding, groups, dilation):
        return convt_triton.conv_transpose(x, weight, bias, stride, padding, output_padding, groups, dilation)
    nd = x.dim() - 2
    k, d, p = tuple(weight.shape[2:]), _ints(dilation, nd), _ints(padding, nd)
    fpad = tuple(d_ * (k_ - 1) - p_ for k_, d_, p_ in zip(k, d, p, strict=True))
    return conv_slide(x, weight, bias, fpad, d, transposed=True, tile=tile)
