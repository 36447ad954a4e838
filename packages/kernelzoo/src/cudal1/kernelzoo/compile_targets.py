"""Compile every Triton kernel of the zoo for every architecture family without a GPU.

    python -m cudal1.kernelzoo.compile_targets [--jobs N]   # one line per (kernel, family); exit 1 on failure

Kernels are found, not listed here: every module of ``cudal1.kernelzoo.ops`` names its Triton kernels in
``TRITON_KERNELS``, a list of :class:`~cudal1.kernelzoo.kernel_specs.TritonKernel`. Each is compiled with Triton's
``GPUTarget("cuda", cc, 32)`` and each family's own launch config (constexprs named like a config key take
that key's value, ``num_warps`` too), so a config that no longer compiles for an architecture we cannot run
here is seen at once. ``--jobs`` compiles in that many processes (default: one per CPU; 73.5 s with one, 40.2 s
with two on the 2-core CPU VM, fresh Triton cache). Must run without ``TRITON_INTERPRET`` (the interpreter replaces
kernels by Python functions).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import functools
import importlib
import multiprocessing
import os
import pkgutil
import sys
from types import ModuleType
from typing import Any

from .arch import CAPABILITY
from .kernel_specs import TritonKernel


def op_modules() -> list[ModuleType]:
    """Every public op module of the zoo (``cudal1.kernelzoo.ops.<op>``), imported."""
    from . import ops

    return [importlib.import_module(f"{ops.__name__}.{m.name}") for m in pkgutil.iter_modules(ops.__path__)
            if not m.name.startswith("_")]


@functools.cache
def triton_kernels() -> list[tuple[ModuleType, TritonKernel]]:
    """(module, spec) for every Triton kernel the op modules declare (found once per process: every compile of
    :func:`_compile_one` looks its kernel up here)."""
    return [(mod, spec) for mod in op_modules() for spec in getattr(mod, "TRITON_KERNELS", [])]


def compile_for(fn: Any, signature: dict[str, Any], constexprs: dict[Any, Any], family: str,
                options: dict[str, Any], attrs: dict[Any, Any] | None = None) -> Any:
    """``fn`` (a ``@triton.jit`` function) compiled for ``family``'s GPUs (``GPUTarget("cuda", cc, 32)``) without a
    GPU: Triton's ``CompiledKernel`` (``asm["cubin"]``, ``metadata.shared``). Raises the compiler's error."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", CAPABILITY[family], 32), options=options)


def _compile_one(index: int, family: str) -> tuple[str, str, int]:
    """(kernel, family, cubin bytes) of the ``index``-th kernel of :func:`triton_kernels`, compiled for ``family``
    with that family's launch config. Raises the compiler's error."""
    mod, spec = triton_kernels()[index]
    fn = getattr(importlib.import_module(spec.defined_in) if spec.defined_in else mod, spec.kernel)
    cfg = getattr(mod, spec.configs)[family]
    const_names = [fn.arg_names[i] for i, p in enumerate(fn.params) if p.is_constexpr]
    consts = {}
    for name in const_names:
        if name in spec.constexprs:
            consts[name] = spec.constexprs[name]
        elif name in cfg:
            consts[name] = cfg[name]
        else:
            raise KeyError(f"{mod.__name__}.{spec.kernel}: constexpr {name} is neither in its config "
                           f"nor in TritonKernel.constexprs")
    sig = {**spec.signature, **{n: "constexpr" for n in const_names}}
    k = compile_for(fn, sig, consts, family,
                    {"num_warps": cfg.get("num_warps", 4), "num_stages": cfg.get("num_stages", 3)})
    return f"{mod.__name__.rsplit('.', 1)[1]}.{spec.kernel}", family, len(k.asm["cubin"])


def compile_all(jobs: int = 1) -> list[tuple[str, str, int]]:
    """(kernel, family, cubin bytes) for every kernel and family, in kernel order then family order, compiled in
    ``jobs`` processes (each compile is one CPU's work); raises the first failure's error."""
    plan = [(i, family) for i in range(len(triton_kernels())) for family in CAPABILITY]
    if jobs <= 1:
        return [_compile_one(i, family) for i, family in plan]
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no Triton state shared with the caller
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(_compile_one, [i for i, _ in plan], [f for _, f in plan]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compile processes (default: CPU count)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs {args.jobs}: at least 1")
    try:
        for name, family, size in compile_all(args.jobs):
            print(f"{name:<44} {family}  cubin {size} bytes")
    except Exception as e:  # noqa: BLE001
        print(f"compile failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
