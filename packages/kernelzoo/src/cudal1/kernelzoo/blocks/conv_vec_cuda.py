"""2-D convolution with few input channels and a unit stride along rows, as a direct convolution in CUDA C whose
lanes own 4 consecutive output columns each: fp32 FMA (no TF32), launched through ``cuda_jit.run`` (the driver's
``cuLaunchKernel``). For the KernelBench level-1 2-D ``conv_standard_*`` / ``conv_pointwise`` solutions in
``kernelbench_v0`` (3 -> 64 channels; 55, 56, 62, 63, 80, 87).

Why a third kernel beside :mod:`.conv_rows_cuda`: that one stages input rows in shared memory, gives each lane ``WT``
(up to 8) consecutive positions of 8 channels and stores them through a shared-memory transpose, one channel at a
time; it wrote its output well below the GPU's DRAM rate, won narrowly over cuDNN (62, 63, 80, 87) and lost on 55 and
56. Here nothing goes through shared memory but the weights: a lane reads its input window straight from global memory
as 16-byte loads (a warp's load is 512 contiguous bytes of an L2-resident row), keeps ``CT`` channels x ``G`` groups
of 4 columns in registers, and stores each (channel, group) as one 16-byte store, so that a warp's store is 512
contiguous bytes of one output row. Weights are read from shared memory as 16-byte broadcasts (every lane of a
warp reads the same channels). What the probes found (``benchmarks/probes/probe_conv_vec.py``, fifteenth pass:
benchmarks/results/2026-11-28-kernelbench-v0-fifteenth-pass-h100.md; figures:
benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md):

- evict-first stores (``__stcs``) against plain ones (the output, 130-270 MB, streams through L2): less time back
  to back; timed as the harness times a call, less on five shapes and slightly more on 55;
- one wave of blocks that each compute consecutive rows with their weights staged once, against a block a row:
  less time on the 3x3 and 3x5 kernels (harness-like timing); on the 1x1 kernel of 87, more back to back, so a
  block computes one row there (:data:`FEW_TAPS`);
- rows of an 8-byte but not 16-byte multiple (254 columns): 8-byte stores that each write every other 8 bytes of
  512 lost to cuDNN under the harness's timing (L2 flushed before each call; on 63) though not back to back;
  lanes that trade values with shuffles so that each store writes 256 contiguous bytes (``Tile.pairs``) won there.

The seventeenth pass (``benchmarks/results/2026-11-28-kernelbench-v0-seventeenth-pass-h200.md``): the kernel's time is
close to the sum of its FMA time and its output's write time, not the larger of the two, and 254-float output rows
cost more than 256-float ones (on 63's work back to back and on a store-only proxy). Staging the input rows a row
group ahead (``Tile.stage``; :data:`STAGED_TILE`) gained on 63 and 86 as the harness times a call (mixed on 55); three
ideas that did not gain were removed (two in commit history): rows stored on 16-byte boundaries (slower than the
paired stores on the store-only proxy), a row group's values kept in registers and stored while the next is computed
(back to back slower on six shapes, slightly faster on 87), and half of the blocks started a few microseconds late so
that not every multiprocessor computes or stores at once (back to back about level on the six 3x3 / 3x5 shapes, slower
on 87).

Layout: a block is ``RB`` output rows at a time (a row is one (sample, output row)); in it, warp ``w`` owns channel
group ``w % NCG`` (``CT`` channels) and column chunk ``(w / NCG) % NWG`` of one row; a chunk is ``G`` groups of 128
columns, lane ``l`` owning columns ``128 g + 4 l .. + 3`` of each group. Shapes, kernel size, padding, dilation,
the row stride and the tile are compiled in (one NVRTC build per shape).

Needs: a unit stride along the last dimension, an input row length that is a multiple of 4 (16-byte aligned rows),
input data that starts on 16 bytes and one group; :func:`conv` falls back to :mod:`.conv_rows_cuda` elsewhere (and to
PyTorch off CUDA fp32). The folded depthwise-separable pair (:func:`separable_conv`) did not win on 86 and is not in
the set.

x: (N, Cin, H, W) float32 CUDA; weight (Cout, Cin, KH, KW); returns (N, Cout, OH, OW) float32.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from .. import cuda_jit
from ..kernel_specs import CudaSource
from . import conv_rows_cuda
from .conv_cuda import _triple, check_one_group, separable_bias, torch_separable, usable

__all__ = ["DEFAULT_TILE", "STAGED_TILE", "Tile", "conv", "conv_vec", "separable_conv", "supported", "vec_source"]

_TEMPLATE = r"""
#define KT (CIN * KH * KW)
#define NCG ((COUT + CT - 1) / CT)
#define COUTP (NCG * CT)
#define NT (32 * NCG * NWG * RB)
#define WINL (4 * NB)
#define IW4 (IW / 4)
#if STAGE
#define NSR (RB * CIN * KH)  // input rows a row group reads: (row in the group, input channel, kernel row)
#define LOADX(b) xr[b]       // a 16-byte block of the staged input row xr
// 16-byte global -> shared copy that bypasses the registers (sm_80+)
__device__ __forceinline__ void cp_async16(float4* dst, const float4* src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(src));
}
// issue the copies of row group `it`'s input rows into `buf` (rows outside the input are not copied: the loop that
// reads them skips them), then close the group of copies
__device__ __forceinline__ void stage_rows(float4* buf, const float4* __restrict__ x4, int it)
{
    const int row0 = (blockIdx.x * LOOP + it) * RB;
    for (int i = threadIdx.x; i < NSR * IW4; i += NT) {
        const int b = i % IW4, s = i / IW4;
        const int kh = s % KH, ci = (s / KH) % CIN, row = row0 + s / (KH * CIN);
        if (row >= ROWS) continue;
        const int n = row / OH, oh = row % OH, ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= IH) continue;
        cp_async16(buf + i, x4 + ((long long)(n * CIN + ci) * IH + ih) * IW4 + b);
    }
    asm volatile("cp.async.commit_group;\n" ::);
}
#else
#define LOADX(b) __ldg(xr + (b))  // a 16-byte block of the input row xr in global memory
#endif
extern "C" __global__ void __launch_bounds__(NT, MINB)
conv_vec(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ dw,
         const float* __restrict__ bias, float* __restrict__ y)
{
    __shared__ float4 ws4[KT * COUTP / 4];  // [KT][COUTP] weights, channels innermost
    float* ws = (float*)ws4;
    for (int i = threadIdx.x; i < KT * COUTP; i += NT) {
        const int kk = i / COUTP, c = i % COUTP;
        float v = 0.f;
        if (c < COUT) {
#if FACTOR
            const int ci = kk / (KH * KW), tap = kk % (KH * KW);
            v = w[c * CIN + ci] * dw[ci * (KH * KW) + tap];
#else
            v = w[c * KT + kk];
#endif
        }
        ws[i] = v;
    }
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int cg = warp % NCG, q = warp / NCG;
    const int wg = q % NWG;
    const int co0 = cg * CT;
#if STAGE
    // the input rows of row group it + 1 are copied into shared memory (double buffer) while group it is computed
    // from the other buffer and stored
    __shared__ float4 xs4[2][NSR * IW4];
    stage_rows(xs4[0], (const float4*)x, 0);
#endif
#pragma unroll 1
    for (int it = 0; it < LOOP; ++it) {  // LOOP consecutive row groups a block: the weights are staged once
        const int row = (blockIdx.x * LOOP + it) * RB + q / NWG;
#if STAGE
        if ((blockIdx.x * LOOP + it) * RB >= ROWS) return;  // the same for the whole block
        __syncthreads();  // every warp is done with the buffer group it + 1 is copied into (read in group it - 1)
        if (it + 1 < LOOP) stage_rows(xs4[(it + 1) & 1], (const float4*)x, it + 1);
        else asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::);  // this thread's copies of group it have landed
        __syncthreads();                                // and every thread's
        if (row >= ROWS) continue;
        const float4* xg = xs4[it & 1] + (q / NWG) * (CIN * KH * IW4);
#else
        if (row >= ROWS) return;
#endif
        const int n = row / OH, oh = row % OH;
        float acc[CT][G][4];
#pragma unroll
        for (int c = 0; c < CT; ++c)
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[c][g][j] = 0.f;
#pragma unroll CI_UNROLL
        for (int ci = 0; ci < CIN; ++ci) {
#pragma unroll
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * SH - PH + kh * DH;
                if (ih < 0 || ih >= IH) continue;  // the same for the whole warp
#if STAGE
                const float4* xr = xg + (ci * KH + kh) * IW4;
#else
                const float4* xr = (const float4*)(x + ((long long)(n * CIN + ci) * IH + ih) * IW);
#endif
                float win[G][WINL];
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    const int b0 = (wg * G + g) * 32 + lane + B0;  // first 16-byte block of the lane's window
#pragma unroll
                    for (int i = 0; i < NB; ++i) {
                        const int b = b0 + i;
                        const float4 v = (b >= 0 && b < IW4) ? LOADX(b) : make_float4(0.f, 0.f, 0.f, 0.f);
                        win[g][4 * i] = v.x; win[g][4 * i + 1] = v.y; win[g][4 * i + 2] = v.z; win[g][4 * i + 3] = v.w;
                    }
                }
#pragma unroll
                for (int kw = 0; kw < KW; ++kw) {
                    const int tap = (ci * KH + kh) * KW + kw;
#pragma unroll
                    for (int c4 = 0; c4 < CT / 4; ++c4) {
                        const float4 wv = ws4[(tap * COUTP + co0) / 4 + c4];
#pragma unroll
                        for (int g = 0; g < G; ++g)
#pragma unroll
                            for (int j = 0; j < 4; ++j) {
                                const float xv = win[g][OFF + j + kw * DW];
                                acc[4 * c4][g][j] = fmaf(wv.x, xv, acc[4 * c4][g][j]);
                                acc[4 * c4 + 1][g][j] = fmaf(wv.y, xv, acc[4 * c4 + 1][g][j]);
                                acc[4 * c4 + 2][g][j] = fmaf(wv.z, xv, acc[4 * c4 + 2][g][j]);
                                acc[4 * c4 + 3][g][j] = fmaf(wv.w, xv, acc[4 * c4 + 3][g][j]);
                            }
                    }
                }
            }
        }
#pragma unroll
        for (int c = 0; c < CT; ++c) {
            const int co = co0 + c;
            if (co >= COUT) break;
#if HAS_BIAS
            const float bv = bias[co];
#else
            const float bv = 0.f;
#endif
            float* yr = y + ((long long)(n * COUT + co) * OH + oh) * OW;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                const int col = (wg * G + g) * 128 + 4 * lane;
                const float a0 = acc[c][g][0] + bv, a1 = acc[c][g][1] + bv, a2 = acc[c][g][2] + bv,
                            a3 = acc[c][g][3] + bv;
#if VW == 4
                if (col < OW) STORE((float4*)(yr + col), make_float4(a0, a1, a2, a3));
#elif VW == 2 && PAIRS
                // rows of 8-byte but not 16-byte multiples: lane l stores columns 2l, 2l + 1 and 64 + 2l, 65 + 2l of
                // the group (taken from lanes l / 2 and 16 + l / 2), so that each store is 256 contiguous bytes
                {
                    const int base = (wg * G + g) * 128, s1 = lane >> 1, s2 = 16 + (lane >> 1);
                    const bool odd = lane & 1;
                    float t0 = __shfl_sync(0xffffffffu, a0, s1), t1 = __shfl_sync(0xffffffffu, a1, s1);
                    float t2 = __shfl_sync(0xffffffffu, a2, s1), t3 = __shfl_sync(0xffffffffu, a3, s1);
                    const float2 lo = odd ? make_float2(t2, t3) : make_float2(t0, t1);
                    t0 = __shfl_sync(0xffffffffu, a0, s2); t1 = __shfl_sync(0xffffffffu, a1, s2);
                    t2 = __shfl_sync(0xffffffffu, a2, s2); t3 = __shfl_sync(0xffffffffu, a3, s2);
                    const float2 hi = odd ? make_float2(t2, t3) : make_float2(t0, t1);
                    if (base + 2 * lane < OW) STORE((float2*)(yr + base + 2 * lane), lo);
                    if (base + 64 + 2 * lane < OW) STORE((float2*)(yr + base + 64 + 2 * lane), hi);
                }
#elif VW == 2
                if (col < OW) STORE((float2*)(yr + col), make_float2(a0, a1));
                if (col + 2 < OW) STORE((float2*)(yr + col + 2), make_float2(a2, a3));
#else
                if (col < OW) STORE(yr + col, a0);
                if (col + 1 < OW) STORE(yr + col + 1, a1);
                if (col + 2 < OW) STORE(yr + col + 2, a2);
                if (col + 3 < OW) STORE(yr + col + 3, a3);
#endif
            }
        }
    }
}
"""


@dataclass(frozen=True)
class Tile:
    """A lane's and a block's share of the output: ``ct`` channels (a multiple of 4) x ``g`` groups of 4 columns a
    lane; ``rb`` output rows a block at a time (None: as many as make the block 256 threads, at least one);
    ``loop`` row groups a block computes one after the other with its weights staged once (None: one for
    convolutions of at most :data:`FEW_TAPS` taps, else as many as make the grid one wave of ``minb`` blocks a
    multiprocessor); ``minb`` blocks a multiprocessor promised to the compiler (``__launch_bounds__``);
    ``streaming`` (evict-first, ``__stcs``) or plain output stores; the input-channel loop unrolled ``ci_unroll``
    times."""

    ct: int = 16
    g: int = 1
    rb: int | None = None
    minb: int = 2
    streaming: bool = True
    loop: int | None = None
    ci_unroll: int = 1
    #: rows of 8-byte (not 16-byte) multiples: lanes trade values so that each 8-byte store instruction writes 256
    #: contiguous bytes (else each writes every other 8 bytes of 512)
    pairs: bool = True
    #: copy the input rows of the next row group into shared memory (``cp.async``: sm_80 and later, as every family
    #: the zoo targets; double buffer) while this one is computed and stored, and read the windows from there (else
    #: each lane loads its windows from global memory when it needs them)
    stage: bool = False

    def __post_init__(self) -> None:
        if self.ct <= 0 or self.ct % 4 or min(self.g, self.minb, self.ci_unroll, self.rb or 1, self.loop or 1) <= 0:
            raise ValueError(f"tile {self}: ct must be a positive multiple of 4; g, rb, minb, loop and ci_unroll "
                             f"positive")


#: the tile the solutions use: 16 channels x 4 columns a lane, 256-thread blocks, evict-first and paired stores, one
#: wave of looping blocks past :data:`FEW_TAPS` taps (picked from the 2026-11-28 probes, H200 then H100)
DEFAULT_TILE = Tile()
#: 8 channels x 8 columns a lane with the input rows staged in shared memory a row group ahead: on an H200
#: (2026-11-28, four probes, one call timed as the harness times it) 7-9% less time than :data:`DEFAULT_TILE` on 63,
#: 3-15% less on the folded 86, from 10% less to 11% more on 55 (all three with 254-float output rows), from 5% less to
#: 14% more on 56 / 62 / 80; through the harness on the H200 it was faster on 55 and 63 (two runs each). The pending
#: second versions of 55 / 63 / 86 use it
STAGED_TILE = Tile(ct=8, g=2, stage=True)
#: at most this many taps (Cin x KH x KW): a block computes one row group (staging the weights costs little)
FEW_TAPS = 8


def supported(x_shape: tuple[int, ...], kernel: tuple[int, ...], stride, padding, dilation,
              data_ptr: int = 0) -> bool:
    """Whether :func:`conv_vec` takes this 2-D convolution: a 4-D input whose rows are a multiple of 4 floats and
    whose data starts on 16 bytes (``data_ptr``: of the contiguous input; a view with an odd storage offset does
    not), a 2-D kernel, unit stride along rows, int or per-dimension padding (not a string)."""
    if len(x_shape) != 4 or len(kernel) != 2 or isinstance(padding, str) or data_ptr % 16:
        return False
    sw = stride[-1] if isinstance(stride, (tuple, list)) else stride
    return sw == 1 and x_shape[3] % 4 == 0


def _pair(v) -> tuple[int, int]:
    """An int or a (height, width) pair as (height, width)."""
    return _triple(v, 2, 0)[1:]  # type: ignore[return-value]


@functools.lru_cache(maxsize=64)
def vec_source(n: int, cin: int, cout: int, spatial: tuple[int, int], kernel: tuple[int, int], stride_h: int,
               padding: tuple[int, int], dilation: tuple[int, int], factor: bool, has_bias: bool,
               tile: Tile = DEFAULT_TILE, multiprocessors: int = 132) -> tuple[CudaSource, tuple[int, int], int, int]:
    """The CUDA source for one shape (everything compiled in), its output size (OH, OW), the grid (blocks) and the
    block (threads). ``multiprocessors``: the device's count, for a one-wave grid (``tile.loop`` None)."""
    (ih, iw), (kh, kw), (ph, pw), (dh, dwl) = spatial, kernel, padding, dilation
    if iw % 4:
        raise ValueError(f"conv_vec needs input rows of a multiple of 4 floats, got width {iw}: use conv_rows_cuda")
    oh = (ih + 2 * ph - dh * (kh - 1) - 1) // stride_h + 1
    ow = iw + 2 * pw - dwl * (kw - 1)
    if oh <= 0 or ow <= 0:
        raise ValueError(f"convolution output size {(oh, ow)} is empty for input size {spatial}, kernel {kernel}")
    b0 = (-pw) // 4  # the 16-byte block of the first column a window reads (floor)
    off = -pw - 4 * b0
    nb = -(-(off + 3 + (kw - 1) * dwl + 1) // 4)
    ncg = -(-cout // tile.ct)
    nwg = -(-ow // (128 * tile.g))
    rb = tile.rb or max(1, 8 // (ncg * nwg))
    threads = 32 * ncg * nwg * rb
    rows = n * oh
    if tile.loop is not None:
        loop = tile.loop
    elif cin * kh * kw <= FEW_TAPS:
        loop = 1
    else:
        loop = max(1, -(-rows // (rb * multiprocessors * tile.minb)))
    if threads > 1024:
        raise ValueError(f"tile {tile} gives {threads} threads a block for {cout} channels x {ow} columns "
                         f"(at most 1024): take more channels or column groups a lane")
    staged = 2 * rb * cin * kh * iw * 4 if tile.stage else 0  # bytes of the double buffer of input rows
    if kh * kw * cin * ncg * tile.ct * 4 + staged > 48 * 1024:
        rows, other = (f" and {staged} bytes of staged input rows", " or an unstaged tile") if staged else ("", "")
        raise ValueError(f"{cin} x {kh} x {kw} taps of {cout} channels{rows} do not fit 48 KB of shared memory: use "
                         f"conv_rows_cuda{other}")
    vw = 4 if ow % 4 == 0 else 2 if ow % 2 == 0 else 1
    store = "__stcs" if tile.streaming else "_st"
    consts = dict(CIN=cin, COUT=cout, IH=ih, IW=iw, OH=oh, OW=ow, KH=kh, KW=kw, SH=stride_h, PH=ph, PW=pw, DH=dh,
                  DW=dwl, CT=tile.ct, G=tile.g, NWG=nwg, RB=rb, MINB=tile.minb, B0=b0, OFF=off, NB=nb, VW=vw,
                  ROWS=rows, LOOP=loop, PAIRS=int(tile.pairs), FACTOR=int(factor), HAS_BIAS=int(has_bias),
                  STORE=store, STAGE=int(tile.stage))
    head = "".join(f"#define {k} {v}\n" for k, v in consts.items())
    head += "template <typename T> __device__ __forceinline__ void _st(T* p, T v) { *p = v; }\n"
    name = "conv_vec_" + "_".join(str(v) for v in consts.values())
    grid = -(-rows // (rb * loop))
    code = head + _TEMPLATE.replace("CI_UNROLL", str(tile.ci_unroll))
    name += f"_u{tile.ci_unroll}"
    return CudaSource(name, code, ("conv_vec",)), (oh, ow), grid, threads  # type: ignore[return-value]


@functools.lru_cache(maxsize=16)
def _multiprocessors(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _launch(x: torch.Tensor, w: torch.Tensor, dw: torch.Tensor | None, bias: torch.Tensor | None,
            kernel: tuple[int, int], cout: int, stride, padding, dilation, tile: Tile) -> torch.Tensor:
    n, cin, ih, iw = x.shape
    sh, sw = _pair(stride)
    if x.data_ptr() % 16:
        raise ValueError("conv_vec reads 16-byte blocks: the input's data must start on 16 bytes (a view with an odd "
                         "storage offset does not; clone it, or use conv_rows_cuda)")
    if sw != 1:
        raise ValueError(f"conv_vec needs a unit stride along rows, got {stride}: use conv_rows_cuda")
    src, (oh, ow), grid, threads = vec_source(n, cin, cout, (ih, iw), kernel, sh, _pair(padding), _pair(dilation),
                                              dw is not None, bias is not None, tile, _multiprocessors(x.device))
    y = torch.empty((n, cout, oh, ow), device=x.device, dtype=torch.float32)
    cuda_jit.run(src, "conv_vec", (grid,), (threads,), "ppppp",
                 (x, w, dw if dw is not None else w, bias if bias is not None else w, y), x.device)
    return y


def conv_vec(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0, dilation=1,
             tile: Tile = DEFAULT_TILE) -> torch.Tensor:
    """The CUDA kernel, unconditionally. x: (N, Cin, H, W) fp32 CUDA, W a multiple of 4; weight: (Cout, Cin, KH,
    KW); bias: (Cout,) or None; stride: an int or (height, 1); padding / dilation: an int or (height, width).
    Returns (N, Cout, OH, OW) fp32."""
    check_one_group(x, weight)
    if x.dim() != 4 or weight.dim() != 4:
        raise ValueError(f"conv_vec is 2-D: x {tuple(x.shape)}, weight {tuple(weight.shape)}")
    return _launch(x.contiguous(), weight.contiguous(), None, bias, tuple(weight.shape[2:]), weight.shape[0],
                   stride, padding, dilation, tile)


def conv(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0, dilation=1,
         groups: int = 1, tile: Tile = DEFAULT_TILE) -> torch.Tensor:
    """Convolution with ``torch.nn.functional.conv2d``'s arguments: this kernel (with ``tile``) where
    :func:`supported` (one group, fp32 CUDA, CuPy installed), :func:`conv_rows_cuda.conv` elsewhere (which runs
    PyTorch off CUDA fp32)."""
    if groups == 1 and usable(x, weight, bias):
        x = x.contiguous()
        if supported(tuple(x.shape), tuple(weight.shape[2:]), stride, padding, dilation, x.data_ptr()):
            return conv_vec(x, weight, bias, stride, padding, dilation, tile)
    return conv_rows_cuda.conv(x, weight, bias, stride, padding, dilation, groups)


def separable_conv(x: torch.Tensor, dw: torch.Tensor, dw_bias: torch.Tensor | None, pw: torch.Tensor,
                   pw_bias: torch.Tensor | None, stride=1, padding=0, dilation=1,
                   tile: Tile = DEFAULT_TILE) -> torch.Tensor:
    """A depthwise convolution (``dw``: (Cin, 1, KH, KW), groups = Cin) followed by a pointwise one (``pw``: (Cout,
    Cin, 1, 1)), as one convolution with weight ``pw[co, ci] * dw[ci, tap]`` (formed in the kernel) and bias
    ``pw @ dw_bias + pw_bias``: linear maps compose, for every input and parameter value. This kernel where
    :func:`supported` (with ``tile``), :func:`conv_rows_cuda.separable_conv` elsewhere. x: (N, Cin, H, W); returns
    (N, Cout, OH, OW)."""
    if not usable(x, dw, pw, dw_bias, pw_bias):
        return torch_separable(x, dw, dw_bias, pw, pw_bias, stride, padding, dilation)
    x = x.contiguous()
    if not supported(tuple(x.shape), tuple(dw.shape[2:]), stride, padding, dilation, x.data_ptr()):
        return conv_rows_cuda.separable_conv(x, dw, dw_bias, pw, pw_bias, stride, padding, dilation)
    bias = separable_bias(x, dw, dw_bias, pw, pw_bias)
    return _launch(x, pw.contiguous(), dw.contiguous(), bias, tuple(dw.shape[2:]), pw.shape[0], stride, padding,
                   dilation, tile)
