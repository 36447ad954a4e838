"""Optimisation techniques a candidate uses, detected statically from its source (Python and the CUDA/C++
or Triton code it embeds), for reports that count techniques with the speedups they come with (the CUDA-L1
paper's technique table).

A tag says the source *contains* the technique's mark, not that it is what made the candidate fast; e.g.
``shared_memory`` means a ``__shared__`` declaration exists. Tags and what marks them (:data:`TECHNIQUES`):

==================  ==============================================================================
tag                 the source ...
==================  ==============================================================================
custom_cuda         defines a CUDA kernel (``__global__``) or loads one (load_inline, CuPy RawKernel)
triton              defines a Triton kernel (``@triton.jit``)
operator_fusion     runs a kernel of its own (CUDA, Triton or a kernel library) where the reference's
                    ``forward`` calls two or more operations (needs the reference source)
algebraic_rewrite   uses no kernel of its own, and its ``forward`` calls a different set of operations
                    than the reference's (needs the reference source)
cuda_graph          captures or replays CUDA graphs
shared_memory       declares ``__shared__`` memory
warp_reduction      uses warp shuffles (``__shfl_*``) or CUB/cooperative-groups warp reductions
vectorized_access   loads or stores through vector types (``float4``, ``float2``, ``half2``, ``__ldg``)
loop_unrolling      asks for unrolling (``#pragma unroll``, ``tl.static_range``)
tensor_cores        uses WMMA/MMA instructions or Triton's ``tl.dot``
memory_layout       changes the memory layout (``channels_last``, ``memory_format=``, permute/transpose
                    followed by ``.contiguous()``)
reduced_precision   computes in fp16/bf16/TF32 or under autocast
torch_compile       compiles with ``torch.compile``
kernel_library      calls a kernel library (``cudal1.kernelzoo``, cuBLAS/cuDNN/CUTLASS handles)
==================  ==============================================================================

Example:
    >>> detect_techniques('@triton.jit\\ndef k(x_ptr):\\n    pass\\n')
    ('triton',)
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

__all__ = ["KERNEL_TAGS", "TECHNIQUES", "detect_techniques", "forward_calls", "library_sources"]

TECHNIQUES: dict[str, str] = {
    "custom_cuda": "CUDA kernel of its own",
    "triton": "Triton kernel of its own",
    "operator_fusion": "several reference operations in one kernel of its own",
    "algebraic_rewrite": "different PyTorch operations than the reference, no kernel of its own",
    "cuda_graph": "CUDA graph capture/replay",
    "shared_memory": "shared memory",
    "warp_reduction": "warp-level reduction",
    "vectorized_access": "vectorised loads/stores",
    "loop_unrolling": "loop unrolling",
    "tensor_cores": "tensor cores (WMMA/MMA, tl.dot)",
    "memory_layout": "memory-layout change",
    "reduced_precision": "reduced precision (fp16/bf16/TF32)",
    "torch_compile": "torch.compile",
    "kernel_library": "kernel library",
}

_PATTERNS: dict[str, re.Pattern[str]] = {
    "custom_cuda": re.compile(r"__global__|load_inline|RawKernel|RawModule|cupy\.ElementwiseKernel"),
    "triton": re.compile(r"@\s*triton\.(jit|autotune)"),
    "cuda_graph": re.compile(r"torch\.cuda\.graph\b|CUDAGraph|make_graphed_callables|cudaGraph"),
    "shared_memory": re.compile(r"__shared__"),
    "warp_reduction": re.compile(r"__shfl_\w*sync|WarpReduce|cg::reduce|__reduce_\w+_sync"),
    "vectorized_access": re.compile(r"\bfloat4\b|\bfloat2\b|\bhalf2\b|__nv_bfloat162|__ldg\s*\(|\buint4\b|\bint4\b"),
    "loop_unrolling": re.compile(r"#\s*pragma\s+unroll|tl\.static_range"),
    "tensor_cores": re.compile(r"\bwmma::|mma\.sync|\bmma_sync\b|tl\.dot\s*\("),
    "memory_layout": re.compile(r"channels_last|memory_format\s*=|\.(permute|transpose)\([^)]*\)\s*\.contiguous\("),
    "reduced_precision": re.compile(r"\.half\(\)|float16|bfloat16|\bautocast\b|allow_tf32|__half\b|\bhalf\b\s*\*"),
    "torch_compile": re.compile(r"torch\.compile\s*\("),
    "kernel_library": re.compile(r"cudal1\.kernelzoo|cublas\w*\(|cudnn\w*\(|cutlass::"),
}
_OWN_KERNEL = ("custom_cuda", "triton", "kernel_library")
#: tags a kernel library's code can lend a candidate that calls it (layout, precision and compile choices
#: inside a library's wrappers are the library's, not the candidate's)
KERNEL_TAGS = frozenset({"custom_cuda", "triton", "cuda_graph", "shared_memory", "warp_reduction",
                         "vectorized_access", "loop_unrolling", "tensor_cores"})


def forward_calls(source: str, class_name: str) -> set[str] | None:
    """Names of the operations ``class_name.forward`` calls (``torch.relu`` -> ``relu``, ``x.sum`` ->
    ``sum``, ``self.conv`` -> ``conv``), or None when the source does not parse or has no such forward."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    names = set()
                    for call in ast.walk(item):
                        if isinstance(call, ast.Call):
                            f = call.func
                            if isinstance(f, ast.Attribute):
                                names.add(f.attr)
                            elif isinstance(f, ast.Name):
                                names.add(f.id)
                    return names
    return None


def detect_techniques(source: str, reference: str | None = None, library: str = "") -> tuple[str, ...]:
    """Tags of :data:`TECHNIQUES` found in candidate ``source``, in the table's order; with the task's
    ``reference`` source, also ``operator_fusion`` / ``algebraic_rewrite`` (see the module docstring).
    ``library``: source of the kernel-library modules the candidate calls (:func:`library_sources`); it
    adds only :data:`KERNEL_TAGS`."""
    found = {tag for tag, pat in _PATTERNS.items() if pat.search(source)}
    if library:
        found |= {tag for tag, pat in _PATTERNS.items() if tag in KERNEL_TAGS and pat.search(library)}
    if reference is not None:
        ref_ops = forward_calls(reference, "Model")
        own_kernel = any(t in found for t in _OWN_KERNEL)
        if own_kernel and ref_ops is not None and len(ref_ops) >= 2:
            found.add("operator_fusion")
        cand_ops = forward_calls(source, "ModelNew")
        if not own_kernel and ref_ops is not None and cand_ops is not None and cand_ops != ref_ops:
            found.add("algebraic_rewrite")
    return tuple(t for t in TECHNIQUES if t in found)



def _imports(source: str, package: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """(module, imported names) of each import in ``source``: ``import a.b`` -> ("a.b", ()); ``from a
    import b, c`` -> ("a", ("b", "c")); relative imports resolved against ``package``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = (package or "").split(".") if package else []
                if not parts or node.level - 1 >= len(parts):
                    continue
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            out.append((base, tuple(a.name for a in node.names)))
    return out


def _find(name: str) -> tuple[str, bool] | None:
    """(source text, is a package) of module ``name`` without importing it (its parents are imported)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return Path(spec.origin).read_text(encoding="utf-8"), spec.submodule_search_locations is not None
    except OSError:
        return None


def library_sources(source: str, root: str | None = None, depth: int = 2) -> str:
    """The sources of the library modules (under ``root``) that ``source`` imports, and of the library
    modules those import (up to ``depth`` levels), concatenated; "" when there are none or the library is
    not installed. A name imported from a package (``from cudal1.kernelzoo import relu``) is followed to the
    module under ``root`` that the package's ``__init__`` takes it from; package ``__init__`` files are not
    included (they import everything). Finding a module imports its parent packages, not the module.
    ``root`` None: the kernel modules of every installed kernel library
    (:func:`cudal1.harness.static_checks.kernel_libraries`)."""
    if root is None:
        from .static_checks import kernel_libraries

        return "\n".join(t for r in sorted(set(kernel_libraries().values()))
                         if (t := library_sources(source, r, depth)))
    seen: set[str] = set()
    out: list[str] = []

    def under(name: str) -> bool:
        return name == root or name.startswith(root + ".")

    def reaches(name: str) -> bool:  # under root, or a package above it that may re-export from it
        return under(name) or root.startswith(name + ".")

    def targets(base: str, names: tuple[str, ...]) -> list[str]:
        if not reaches(base):
            return []
        found = _find(base)
        if found is None:
            return []
        text, is_pkg = found
        if not is_pkg:
            return [base] if under(base) else []
        mods = []
        for n in names:
            sub = _find(f"{base}.{n}")
            if sub is not None:
                if not sub[1] and under(f"{base}.{n}"):
                    mods.append(f"{base}.{n}")
                continue
            for b2, names2 in _imports(text, base):  # where the package's __init__ takes `n` from
                if n in names2 and reaches(b2):
                    mods += [m for m in targets(b2, (n,)) if m not in mods]
        return mods

    frontier = [(m, 0) for base, names in _imports(source, None) for m in targets(base, names)]
    while frontier:
        name, level = frontier.pop(0)
        if name in seen:
            continue
        seen.add(name)
        found = _find(name)
        if found is None:
            continue
        out.append(found[0])
        if level < depth:
            pkg = name.rpartition(".")[0]
            frontier += [(m, level + 1) for base, names in _imports(found[0], pkg)
                         for m in targets(base, names)]
    return "\n".join(out)


def library_digest(source: str, root: str | None = None) -> str:
    """Content hash of the installed kernel-library code that ``source`` imports (followed four imports
    deep), "" when it imports none. ``root`` None: every module of every installed kernel library's package
    (the entry point's name, ``cudal1.kernelzoo``: its ops and the blocks and helpers beside them, not only the
    kernel root that :func:`library_sources` reads for technique tags). A stored result of the same source
    measured the library code of its digest: when the library changed since, the result no longer describes
    what the candidate would run, so the pool evaluates the pair again instead of reading it back
    (:meth:`cudal1.harness.pool.EvalPool.map`)."""
    from .static_checks import kernel_libraries
    from .types import content_hash

    roots = [root] if root is not None else sorted(kernel_libraries())
    text = "\n".join(t for r in roots if (t := library_sources(source, r, depth=4)))
    return content_hash("library", text) if text else ""
