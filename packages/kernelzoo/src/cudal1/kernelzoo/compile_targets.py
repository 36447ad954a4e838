"""Compile every Triton kernel of the zoo for every architecture family without a GPU.

    python -m cudal1.kernelzoo.compile_targets      # prints one line per (kernel, family); exit 1 on failure

Uses Triton's ``GPUTarget("cuda", cc, 32)`` with each family's own launch config, so a config that no
longer compiles for an architecture we cannot run here is seen at once. Must run without
``TRITON_INTERPRET`` (the interpreter replaces kernels by Python functions).
"""

from __future__ import annotations

import sys

from .arch import CAPABILITY

# (module, kernel attribute, signature, constexpr names besides BLOCK)
KERNELS = [
    ("relu", "_relu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"}),
    ("gelu", "_gelu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"}),
    ("silu", "_silu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"}),
    ("softmax", "_softmax_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32"}),
    ("layer_norm", "_layer_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32",
                                          "n_cols": "i32", "eps": "fp32"}),
    ("rms_norm", "_rms_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32",
                                      "eps": "fp32"}),
]


def compile_all() -> list[tuple[str, str, int]]:
    """(kernel, family, cubin bytes) for every kernel and family; raises on the first failure."""
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    out = []
    for mod_name, attr, sig in KERNELS:
        mod = importlib.import_module(f"cudal1.kernelzoo.ops.{mod_name}")
        fn = getattr(mod, attr)
        for family, cc in CAPABILITY.items():
            cfg = mod.CONFIGS[family]
            src = ASTSource(fn=fn, signature={**sig, "BLOCK": "constexpr"}, constexprs={"BLOCK": cfg["BLOCK"]})
            k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": cfg["num_warps"]})
            out.append((f"{mod_name}.{attr}", family, len(k.asm["cubin"])))
    return out


def main() -> int:
    try:
        for name, family, size in compile_all():
            print(f"{name:<40} {family}  cubin {size} bytes")
    except Exception as e:  # noqa: BLE001
        print(f"compile failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
