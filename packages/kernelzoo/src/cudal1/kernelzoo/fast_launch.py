"""Launching a ``@triton.jit`` kernel with little host time: compile through Triton's normal path once, then
call the compiled kernel's launcher directly.

Why: at KernelBench level 1's original sizes (e.g. 16x16384 fp32) a call is host time, not GPU time, and
``kernel[grid](*args)`` spends far more of it per launch than an eager PyTorch op does
(benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md).
``JITFunction.run`` does on every call: read Triton's knobs, bind the arguments to the signature, compute
Triton's specialisation of each one (in C++), turn that and the options into a cache-key string, look the
kernel up, check the kernel's global variables, build a launch-metadata dict for the launch hooks, and the
launcher then asks the driver where each tensor's pointer lives (``cuPointerGetAttribute``, once per pointer).

:class:`FastLaunch` is a per-call-site handle: the caller fixes the constexpr values and the compile options
when making it (``FastLaunch(kernel, BLOCK=2048, num_warps=4)``) and passes only the runtime arguments per
call (``handle(grid, x, y, n)``). Per call it computes a key of what, beside the fixed constexprs and options,
can change the binary Triton compiles, and which is at least as fine as Triton's own specialisation:

* the current CUDA device (the compiled module is loaded in that device's context),
* for each tensor: its dtype, its device index, its data pointer modulo 16 (Triton: 16-byte aligned or not),
* for each Python int: ``== 1`` (Triton makes it a constant), its C type (i32 / i64 / u64 by range), whether
  it is divisible by 16; for a float (fp32) and a bool (i1): the type alone.

A key seen before launches the ``CompiledKernel`` it was compiled as, with its launcher (``compiled.run(gx,
gy, gz, stream, compiled.function, compiled.packed_metadata, None, None, None, *args)``, every parameter in
order, constexprs included: the launcher signature of ``JITFunction.run`` in triton 3.6.0 and 3.9.0), on
``torch._C._cuda_getCurrentRawStream(device)`` (the one C call that gives the raw handle; Triton's own
``get_current_stream``), passing tensors as their integer device pointers (the launcher takes an int as is). A
new key goes through ``kernel[grid](...)``, which compiles (or finds Triton's compiled kernel), launches that
call and returns the ``CompiledKernel`` kept for the key. Because the key refines Triton's, every later
argument list with the same key would have made Triton pick the same binary; and an argument Triton refused (a
CPU tensor: device index -1; an int no 64-bit type holds: no key) never gets an entry, so it always meets
Triton's own error.

The guard: looping over the arguments to build the key tuple and hashing it was most of the handle's own host
time (a (16, 16384) ReLU module: a call through the keyed path, output allocation included, cost clearly more
than with the bare launcher; benchmarks/results/2026-11-26-kernelbench-v0-release-h100/
call13-probe-launch-paths.txt). So once a key has launched directly :data:`GUARD_AFTER` times, the handle
generates (``exec``) a function for that one key, which checks each condition of the key inline on the call's
arguments (``type(a0) is T0 and a0.dtype is D0 and a0.get_device() == 0 and (p0 := a0.data_ptr()) & 15 == 0
and ...``: no loop, no key tuple, no hash) and calls the launcher with the constexprs in place; any failed
condition hands the call to the keyed path above. It
accepts exactly the argument lists whose key is its key and whose tensors have the types they had when it was
built (a stricter condition, never a looser one). A key gets a guard when its count of direct launches through
the keyed path reaches :data:`GUARD_AFTER`, so once per key at most, and a handle builds at most
:data:`MAX_GUARDS`; the newest replaces the last (a handle whose hot key changes follows it; one that
alternates between keys keeps the guard of the last one to get there, the other going through the keyed path).

Everything else goes through ``kernel[grid]`` unchanged: under ``TRITON_INTERPRET=1`` (the kernel is an
``InterpretedFunction``), without CUDA, with a Triton without ``triton.knobs`` (older ones), with
``$CUDAL1_FAST_LAUNCH=0``, while a launch hook (a profiler such as proton) or a kernel pre-run hook is
installed, and for an argument that is not a tensor, int, float or bool (``None``, tuples, tensor
descriptors). Launch hooks are left out of the direct launch (``None``: no launch metadata dict is built),
which is what Triton's launcher does with an empty hook chain.

Not checked per call (Triton checks or reads them; they are fixed for a process in this project's use): that
the kernel's global constexpr values have not changed since compiling, ``$TRITON_DEBUG`` and Triton's
instrumentation mode, and a kernel re-defined with new source (``_unsafe_update_src``). The handle keeps each
``CompiledKernel`` alive (its module is unloaded when it is freed). Not for use while a CUDA graph is being
captured with reductions through :class:`ReductionScratch` (its buffers would be allocated inside the
capture).

:class:`ReductionScratch`: the partial-sums buffer and arrival counter of a one-launch reduction ("the program
that arrives last sums the partials"), one pair per (device, stream) so two concurrent streams never share
one; the kernels leave the counter at zero.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from ._triton import HAVE_TRITON, triton

__all__ = ["FAST_LAUNCH_ENV", "GUARD_AFTER", "MAX_GUARDS", "OPTION_NAMES", "FastLaunch", "ReductionScratch",
           "arg_key", "bind", "fast_path_supported", "int_class"]

#: set to ``0`` to send every :class:`FastLaunch` call through ``kernel[grid]`` (A/B timing, debugging)
FAST_LAUNCH_ENV = "CUDAL1_FAST_LAUNCH"
#: compile options a handle takes by keyword beside the kernel's constexprs
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")
#: direct launches of a key through the keyed path after which a handle builds the guard for that key
GUARD_AFTER = 2
#: most guards one handle builds (each is one ``exec``: ~50 us)
MAX_GUARDS = 4

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1
_Tensor = torch.Tensor


def int_class(v: int) -> int | None:
    """Triton's specialisation class of a Python int argument, as one small int: -1 for ``1`` (compiled as a
    constant), else ``2 * type + (v % 16 == 0)`` with type 0 for i32, 1 for i64 and 2 for u64 (Triton's types
    by range); None for an int that no 64-bit type holds (below -2**63 or past 2**64 - 1: Triton raises
    OverflowError, so it must not reach a launcher)."""
    if v == 1:
        return -1
    if _I32_MIN <= v <= _I32_MAX:
        kind = 0
    elif _I64_MIN <= v <= _I64_MAX:
        kind = 1
    elif 0 <= v <= _U64_MAX:
        kind = 2
    else:
        return None
    return 2 * kind + (v % 16 == 0)


def arg_key(a: Any) -> Any:
    """What about one runtime argument can change the binary Triton compiles (its part of a
    :class:`FastLaunch` key), or None for an argument the fast path does not take (the call then goes through
    ``kernel[grid]``). Tensors: ``(dtype, device index, data_ptr % 16)`` (the residue: finer than Triton's
    aligned-or-not); ints: their :func:`int_class` (as a bool for i32: equal to 0 / 1); floats: ``1.5``;
    bools: ``"b"``. :func:`bind` inlines these rules."""
    t = type(a)
    if t is bool:
        return "b"
    if t is int:
        return int_class(a)
    if t is float:
        return 1.5
    if isinstance(a, torch.Tensor):
        return (a.dtype, a.get_device(), a.data_ptr() & 15)
    return None


def bind(device: int, args: Sequence[Any]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """The key of a call on ``device`` with runtime arguments ``args`` (``(device, *map(arg_key, args))``) and
    the values its launcher takes (tensors as int pointers); None when an argument has no key. The keyed path's
    host time is mostly this loop (a guard checks one key without it)."""
    key: list[Any] = [device]
    vals: list[Any] = []
    kadd, vadd = key.append, vals.append
    for a in args:
        t = type(a)
        if t is _Tensor or (t is not int and t is not float and t is not bool and isinstance(a, _Tensor)):
            p = a.data_ptr()
            kadd((a.dtype, a.get_device(), p & 15))
            vadd(p)
        elif t is int:
            if a != 1 and _I32_MIN <= a <= _I32_MAX:
                kadd(not a & 15)  # an i32 other than 1: int_class's 0 / 1 as a bool
            else:
                c = int_class(a)
                if c is None:
                    return None
                kadd(c)
            vadd(a)
        elif t is float:
            kadd(1.5)
            vadd(a)
        elif t is bool:
            kadd("b")
            vadd(a)
        else:
            return None
    return tuple(key), vals


def _runtime_knobs() -> Any:
    knobs = getattr(triton, "knobs", None) if HAVE_TRITON else None
    return getattr(knobs, "runtime", None)


def fast_path_supported(kernel: Any) -> bool:
    """Whether :class:`FastLaunch` can launch ``kernel`` itself: a Triton with ``triton.knobs`` (3.6 and 3.9
    checked), a compiled ``JITFunction`` (not the interpreter's ``InterpretedFunction``), and
    ``$CUDAL1_FAST_LAUNCH`` not ``0``."""
    if os.environ.get(FAST_LAUNCH_ENV, "1") == "0" or _runtime_knobs() is None:
        return False
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return False
    return isinstance(kernel, JITFunction)


def _kernel_params(kernel: Any) -> list[tuple[str, bool, Any]]:
    """(name, is constexpr, default) of each parameter of a ``@triton.jit`` kernel, in order."""
    fn = getattr(kernel, "fn", kernel)
    out = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
        out.append((p.name, "constexpr" in text, p.default))
    return out


class FastLaunch:
    """A ``@triton.jit`` kernel with its constexprs and compile options fixed, launched with little host time.

    ``FastLaunch(kernel, BLOCK=2048, num_warps=4)(grid, x, y, n)`` launches what ``kernel[grid](x, y, n,
    BLOCK=2048, num_warps=4)`` launches. Every constexpr parameter of the kernel must be given here unless it
    has a default; the call passes the other parameters, positionally, in the kernel's order. ``options``:
    other compile options by name (those of :data:`OPTION_NAMES` may be given as keywords). See the module
    docstring for what a call does and when it falls back to ``kernel[grid]``.
    """

    def __init__(self, kernel: Any, *, options: Mapping[str, Any] | None = None, **values: Any) -> None:
        self.kernel = kernel
        params = _kernel_params(kernel)
        names = {n for n, _, _ in params}
        opts = dict(options or {})
        consts: dict[str, Any] = {}
        for k, v in values.items():
            if k in OPTION_NAMES:
                opts[k] = v
            elif k not in names:
                raise TypeError(f"{getattr(kernel, '__name__', kernel)} has no parameter {k!r} and it is not "
                                f"a compile option {OPTION_NAMES}: pass other options as options={{...}}")
            else:
                consts[k] = v
        self.runtime_names: tuple[str, ...] = tuple(n for n, c, _ in params if not c)
        given = set(consts)
        for n, is_const, default in params:
            if n in given and not is_const:
                raise TypeError(f"parameter {n!r} is not a tl.constexpr: pass it at each call, not to "
                                f"FastLaunch")
            if is_const and n not in given:
                if default is inspect.Parameter.empty:
                    name = getattr(kernel, "__name__", kernel)
                    raise TypeError(f"constexpr {n!r} of {name} has no default: give its value to FastLaunch")
                consts[n] = default
        self.constexprs: dict[str, Any] = consts
        self.options: dict[str, Any] = opts
        # the launcher takes every parameter in order, constexprs included (it skips them)
        self._trailing = all(not c for _, c, _ in params[: len(self.runtime_names)])
        self._tail = tuple(consts[n] for n, c, _ in params if c)
        self._order = tuple((c, n) for n, c, _ in params)
        self._nargs = len(self.runtime_names)
        # key -> [launcher, function, packed metadata, CompiledKernel, direct launches through the keyed path]
        self._cache: dict[tuple[Any, ...], list[Any]] = {}
        self._direct: bool | None = None  # decided at the first call (needs to know whether CUDA is there)
        self._knobs = _runtime_knobs()
        self._guards_left = MAX_GUARDS
        self._launch: Callable[[Sequence[int], tuple[Any, ...]], None] = self._launch_keyed
        self.guarded_key: tuple[Any, ...] | None = None
        """The key the current guard launches (None before the first guard); see the module docstring."""
        self._guard_source = ""  # the current guard's source (for debugging)

    # --------------------------------------------------------------------------------------------------------
    def __call__(self, grid: Sequence[int], *args: Any) -> None:
        """Launch on the current CUDA stream of the current device. ``grid``: 1 to 3 ints; ``args``: the
        kernel's non-constexpr parameters in order."""
        self._launch(grid, args)

    def _launch_keyed(self, grid: Sequence[int], args: tuple[Any, ...]) -> None:
        """The keyed path: compute the call's key, launch its compiled kernel or go through ``kernel[grid]``."""
        if len(args) != self._nargs:
            raise TypeError(f"{getattr(self.kernel, '__name__', self.kernel)} takes {self._nargs} runtime "
                            f"arguments {self.runtime_names}, got {len(args)}")
        direct = self._direct
        if direct is None:
            direct = self._direct = fast_path_supported(self.kernel) and torch.cuda.is_available()
        if not direct:
            self._through_triton(grid, args, None)
            return
        dev = torch._C._cuda_getDevice()
        bound = bind(dev, args)
        if bound is None:
            self._through_triton(grid, args, None)
            return
        tkey, vals = bound
        entry = self._cache.get(tkey)
        rt = self._knobs
        enter, leave = rt.launch_enter_hook, rt.launch_exit_hook
        if (entry is None or (enter is not None and getattr(enter, "calls", True))
                or (leave is not None and getattr(leave, "calls", True)) or self.kernel.pre_run_hooks):
            self._through_triton(grid, args, tkey)
            return
        n = len(grid)
        gx, gy, gz = grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1
        stream = torch._C._cuda_getCurrentRawStream(dev)
        if self._trailing:
            entry[0](gx, gy, gz, stream, entry[1], entry[2], None, None, None, *vals, *self._tail)
        else:
            entry[0](gx, gy, gz, stream, entry[1], entry[2], None, None, None, *self._merge(vals))
        entry[4] += 1
        if entry[4] == GUARD_AFTER and self._guards_left:
            self._install_guard(tkey, entry, args)

    # --------------------------------------------------------------------------------------------------------
    def _install_guard(self, key: tuple[Any, ...], entry: list[Any], args: tuple[Any, ...]) -> None:
        """Generate and install the guard of ``key`` (module docstring), built from ``args``, a call with that
        key. Not built (the keyed path stays) for a launch hook that is neither None nor a hook chain."""
        rt = self._knobs
        ns: dict[str, Any] = {"handle": self, "kernel": self.kernel, "rt": rt, "run": entry[0],
                              "function": entry[1], "metadata": entry[2], "compiled": entry[3],
                              "int_class": int_class,
                              "get_device": torch._C._cuda_getDevice,
                              "get_stream": torch._C._cuda_getCurrentRawStream}
        dev = int(key[0])
        conds = [f"get_device() == {dev}"]
        for hook in ("launch_enter_hook", "launch_exit_hook"):
            chain = getattr(rt, hook)
            if chain is None:
                conds.append(f"rt.{hook} is None")
            elif isinstance(getattr(chain, "calls", None), list):
                ns[hook] = chain  # a chain replaced by another object fails `is`: the keyed path decides
                conds.append(f"rt.{hook} is {hook} and not {hook}.calls")
            else:
                return
        conds.append("not kernel.pre_run_hooks")
        names, vals = [], []
        for i, (a, part) in enumerate(zip(args, key[1:], strict=True)):
            v = f"a{i}"
            names.append(v)
            t = type(a)
            if t is int:
                conds += [f"type({v}) is int", _int_test(v, part)]
            elif t is float or t is bool:
                conds.append(f"type({v}) is {t.__name__}")
            else:  # a tensor (bind gave it a key): (dtype, device index, pointer % 16)
                ns[f"T{i}"], ns[f"D{i}"] = t, part[0]
                conds += [f"type({v}) is T{i}", f"{v}.dtype is D{i}", f"{v}.get_device() == {int(part[1])}",
                          f"(p{i} := {v}.data_ptr()) & 15 == {int(part[2])}"]
                v = f"p{i}"
            vals.append(v)
        it = iter(vals)
        call = []
        for j, (is_const, name) in enumerate(self._order):
            if is_const:
                ns[f"c{j}"] = self.constexprs[name]
                call.append(f"c{j}")
            else:
                call.append(next(it))
        cond = "\n            and ".join(conds)
        src = f"""
def launch(grid, args):
    try:
        [{", ".join(names)}] = args
    except ValueError:
        return handle._launch_keyed(grid, args)
    if ({cond}):
        n = len(grid)
        run(grid[0], grid[1] if n > 1 else 1, grid[2] if n > 2 else 1, get_stream({dev}), function, metadata,
            None, None, None, {", ".join(call)})
    else:
        handle._launch_keyed(grid, args)
"""
        exec(compile(src, f"<FastLaunch guard of {getattr(self.kernel, '__name__', 'kernel')}>", "exec"), ns)
        self._launch = ns["launch"]
        self._guard_source = src
        self.guarded_key = key
        self._guards_left -= 1

    def _merge(self, vals: list[Any]) -> list[Any]:
        """All parameters in the kernel's order: runtime values and constexpr values interleaved."""
        it = iter(vals)
        return [self.constexprs[n] if c else next(it) for c, n in self._order]

    def _through_triton(self, grid: Sequence[int], args: Sequence[Any], key: tuple[Any, ...] | None) -> None:
        """``kernel[grid](...)``; with a key, keep the ``CompiledKernel`` it returns for the fast path."""
        kwargs = dict(zip(self.runtime_names, args, strict=True))
        compiled = self.kernel[tuple(grid)](**kwargs, **self.constexprs, **self.options)
        if key is None or compiled is None:
            return
        if hasattr(compiled, "result"):  # an async-compile future
            compiled = compiled.result()
        if key not in self._cache:  # (a call with hooks comes here with a key that has an entry: keep it)
            run = compiled.run  # loads the module on first use (CompiledKernel._init_handles)
            self._cache[key] = [run, compiled.function, compiled.packed_metadata, compiled, 0]

    @property
    def compiled_count(self) -> int:
        """How many specialisations this handle launches directly."""
        return len(self._cache)


def _int_test(v: str, part: Any) -> str:
    """The guard's inline test that the int named ``v`` has key part ``part`` (:func:`bind`'s)."""
    if part is True or part is False:  # an i32 other than 1, divisible by 16 or not
        if part:  # (divisible by 16: not 1)
            return f"{_I32_MIN} <= {v} <= {_I32_MAX} and {v} & 15 == 0"
        return f"{v} != 1 and {_I32_MIN} <= {v} <= {_I32_MAX} and {v} & 15 != 0"
    if part == -1:
        return f"{v} == 1"
    return f"int_class({v}) == {int(part)}"  # i64 / u64: rare


class ReductionScratch:
    """Partial-sums buffer (``parts`` fp32 values) and arrival counter (one int32, zero between launches) of
    one-launch reductions, one pair per (device, stream).

    A kernel that uses them: each program stores its partial at ``partials[pid]`` (and its other partials at
    ``partials[k * P + pid]``), synchronises its threads (``tl.debug_barrier()``), then bumps the counter with
    ``tl.atomic_add(counter, 1, sem="acq_rel")``; the program that reads ``P - 1`` back sums ``partials[:P]``
    in a fixed order (loads that bypass L1: ``cache_modifier=".cg"``), writes the result and stores 0 to the
    counter. Kernels on one stream run one after another, so the kernels of different solutions may share a
    pair; two streams never do. A stream handle the driver reuses after its stream was destroyed gets the old
    pair (torch keeps its pooled streams alive, so this does not happen with torch streams).
    """

    def __init__(self, parts: int = 4096) -> None:
        self.parts = int(parts)
        self._bufs: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}

    def get(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(partials, counter) for ``like``'s device and that device's current stream (CPU: one pair)."""
        dev = like.get_device()
        key = (dev, torch._C._cuda_getCurrentRawStream(dev) if dev >= 0 else 0)
        bufs = self._bufs.get(key)
        if bufs is None:
            bufs = self._bufs[key] = (torch.zeros(self.parts, dtype=torch.float32, device=like.device),
                                      torch.zeros(1, dtype=torch.int32, device=like.device))
        return bufs
