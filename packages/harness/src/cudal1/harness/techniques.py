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
import re

__all__ = ["TECHNIQUES", "detect_techniques", "forward_calls"]

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


def detect_techniques(source: str, reference: str | None = None) -> tuple[str, ...]:
    """Tags of :data:`TECHNIQUES` found in candidate ``source``, in the table's order; with the task's
    ``reference`` source, also ``operator_fusion`` / ``algebraic_rewrite`` (see the module docstring)."""
    found = {tag for tag, pat in _PATTERNS.items() if pat.search(source)}
    if reference is not None:
        ref_ops = forward_calls(reference, "Model")
        own_kernel = any(t in found for t in _OWN_KERNEL)
        if own_kernel and ref_ops is not None and len(ref_ops) >= 2:
            found.add("operator_fusion")
        cand_ops = forward_calls(source, "ModelNew")
        if not own_kernel and ref_ops is not None and cand_ops is not None and cand_ops != ref_ops:
            found.add("algebraic_rewrite")
    return tuple(t for t in TECHNIQUES if t in found)
