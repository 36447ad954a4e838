"""Static (AST) checks of a candidate's source, before any of it runs.

Each finding is a named flag (:mod:`cudal1.harness.flags`). Some flags reject the candidate outright
(:data:`REJECTING`): there is no legitimate kernel that needs them. The others describe the candidate (it
uses a side stream, reduced precision, a custom kernel ...). These checks run in the parent, on the source
only; they are hints that catch the usual ways in, not the boundary: a candidate runs in its own sandboxed
process and the parent judges what it observes of it (see :mod:`cudal1.harness.pair`).

=====================  =========================================================================
flag                   found when the source ...
=====================  =========================================================================
monkeypatch            assigns to an attribute of an imported module (``torch.matmul = f``,
                       ``F.relu = f``, ``time.perf_counter = f``) or calls ``setattr`` on one
calls_reference        uses the name ``Model`` (the task's reference) or imports a task module
introspection          reaches into the interpreter or the process: ``gc``, ``ctypes``,
                       ``sys._getframe`` (also imported under another name), frame and traceback
                       attributes (``f_back``, ``f_locals``, ``tb_frame`` ...), ``inspect.currentframe``/
                       ``stack``, ``sys.modules``, ``sys.argv``, ``__import__``/``__builtins__``,
                       ``eval``/``exec``/``compile``, ``os.write``/``os.dup*``/``os.fdopen``/``os.kill``/
                       ``os.fork``/``os.posix_spawn`` (and the same through ``posix``), ``open()`` on a file
                       descriptor, ``/proc/``, ``signal``, ``subprocess``, ``getattr``/``setattr`` with a
                       computed name, dunder attributes such as ``__dict__``, ``__globals__``, ``__subclasses__``
side_stream            creates CUDA streams (``torch.cuda.Stream``, ``cudaStreamCreate``, CuPy)
threads                imports ``threading``, ``_thread``, ``concurrent.futures`` or ``multiprocessing``
                       (``torch.multiprocessing`` too)
reduced_precision      mentions fp16/bf16/TF32/autocast, or uses Triton ``tl.dot`` without
                       ``input_precision="ieee"`` (Triton's fp32 dot defaults to TF32)
exception_fallback     has ``try``/``except`` inside a ``forward``
mode_call              calls ``.train(``/``.eval(`` or assigns ``.training`` inside a ``forward``
stateful_forward       assigns to ``self.<attribute>`` inside a ``forward`` (possible result cache)
library_flag           sets a ``torch.backends`` switch (cuDNN benchmark, TF32 ...)
cuda_graph             captures or replays CUDA graphs (descriptive: launch time saved is a real gain)
torch_compile          uses ``torch.compile`` / dynamo / inductor (a PyTorch-level rewrite)
custom_kernel_source   defines a Triton, CUDA/C++ (load_inline), CuPy or Numba kernel
=====================  =========================================================================
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

REJECTING = frozenset({"monkeypatch", "calls_reference", "introspection"})

_INTROSPECTION_MODULES = {"gc", "ctypes", "inspect", "signal", "subprocess", "builtins", "importlib", "pty", "posix"}
_INTROSPECTION_CALLS = {"__import__", "eval", "exec", "compile", "globals", "vars", "locals", "__builtins__"}
_HARMLESS_DUNDERS = {"__init__", "__name__", "__class__", "__call__", "__doc__", "__file__", "__version__",
                     "__module__", "__qualname__", "__len__", "__getitem__", "__setitem__", "__iter__", "__next__",
                     "__enter__", "__exit__", "__repr__", "__str__", "__new__", "__torch_function__",
                     "__torch_dispatch__", "__cuda_array_interface__", "__dlpack__"}
_OS_DANGEROUS = {"write", "dup", "dup2", "fdopen", "kill", "killpg", "_exit", "fork", "forkpty", "system", "popen",
                 "execv", "execve", "spawnv", "posix_spawn", "posix_spawnp", "open", "pipe", "close", "read",
                 "register_at_fork"}
#: ``sys`` attributes that reach the interpreter's frames or the launching command line
_SYS_INTROSPECTION = {"_getframe", "_current_frames", "_current_exceptions", "modules", "settrace", "setprofile",
                      "argv", "orig_argv"}
#: attributes of frames, tracebacks, generators and coroutines that walk the interpreter's stack
_FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame",
                     "cr_frame", "ag_frame"}
_THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "torch.multiprocessing"}
_PRECISION_RE = re.compile(
    r"\.half\(|float16|bfloat16|\bautocast\b|allow_tf32|set_float32_matmul_precision|\btf32\b|__half|half2|"
    r"__nv_bfloat16|\bfp16\b|\bbf16\b|\bamp\.", re.IGNORECASE)
_STREAM_RE = re.compile(r"cuda\.Stream\b|cudaStreamCreate|cuda\.stream\(|Stream\(non_blocking|ExternalStream")
_GRAPH_RE = re.compile(r"CUDAGraph|cuda\.graph\(|make_graphed_callables|reduce-overhead|cudagraph", re.IGNORECASE)
_COMPILE_RE = re.compile(r"torch\.compile\(|torch\._dynamo|torch\._inductor")
_KERNEL_RE = re.compile(r"@triton\.jit|triton\.jit\(|load_inline|cpp_extension|RawKernel|RawModule|ElementwiseKernel|"
                        r"ReductionKernel|cuda\.jit|__global__")


@dataclass(frozen=True)
class StaticReport:
    """Flags found in a candidate's source and, per flag, where (``line N: text``)."""

    flags: tuple[str, ...]
    evidence: dict[str, list[str]] = field(default_factory=dict)

    @property
    def rejecting(self) -> list[str]:
        return [f for f in self.flags if f in REJECTING]


class _Visitor(ast.NodeVisitor):
    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.evidence: dict[str, list[str]] = {}
        self.module_aliases: set[str] = set()  # names bound to imported modules
        self.forward_depth = 0

    def add(self, flag: str, node: ast.AST) -> None:
        ln = getattr(node, "lineno", 0)
        text = self.lines[ln - 1].strip() if 0 < ln <= len(self.lines) else ""
        self.evidence.setdefault(flag, []).append(f"line {ln}: {text[:120]}")

    # imports ------------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            root = a.name.split(".")[0]
            self.module_aliases.add(a.asname or root)
            self._check_module(a.name, node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        self._check_module(mod, node)
        for a in node.names:
            if a.name == "Model" or mod.startswith("cudal1_task") or mod.startswith("cudal1.harness"):
                self.add("calls_reference", node)
            if a.name in _INTROSPECTION_MODULES or (mod in ("os", "posix") and a.name in _OS_DANGEROUS) or (
                    mod == "sys" and a.name in _SYS_INTROSPECTION):
                self.add("introspection", node)  # also `from sys import _getframe as f`: the alias hides nothing
            if f"{mod}.{a.name}" in _THREAD_MODULES or (mod == "torch" and a.name == "multiprocessing"):
                self.add("threads", node)
            # `from torch.nn import functional as F` binds a module
            self.module_aliases.add(a.asname or a.name)
        self.generic_visit(node)

    def _check_module(self, name: str, node: ast.AST) -> None:
        root = name.split(".")[0]
        if root in _INTROSPECTION_MODULES:
            self.add("introspection", node)
        if root in _THREAD_MODULES or any(name == m or name.startswith(m + ".") for m in _THREAD_MODULES):
            self.add("threads", node)
        if name.startswith("cudal1_task") or name.startswith("cudal1.harness"):
            self.add("calls_reference", node)

    # names and calls ----------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "Model" and isinstance(node.ctx, ast.Load):
            self.add("calls_reference", node)
        if node.id in _INTROSPECTION_CALLS and isinstance(node.ctx, ast.Load):
            self.add("introspection", node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in _HARMLESS_DUNDERS:
            self.add("introspection", node)
        if node.attr in _FRAME_ATTRIBUTES:
            self.add("introspection", node)
        chain = _dotted(node)
        if chain:
            parts = chain.split(".")
            if parts[0] == "sys" and len(parts) > 1 and parts[1] in _SYS_INTROSPECTION:
                self.add("introspection", node)
            if parts[0] in ("os", "posix") and len(parts) > 1 and parts[1] in _OS_DANGEROUS:
                self.add("introspection", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        fn = _dotted(node.func)
        if fn == "setattr" and node.args and _root_name(node.args[0]) in self.module_aliases:
            self.add("monkeypatch", node)
        if fn in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2:
            name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            if not isinstance(name, str):
                self.add("introspection", node)  # attribute names computed at run time hide what is reached
            elif name in _FRAME_ATTRIBUTES or (_root_name(node.args[0]) == "sys" and name in _SYS_INTROSPECTION) or (
                    _root_name(node.args[0]) in ("os", "posix") and name in _OS_DANGEROUS):
                self.add("introspection", node)  # getattr(sys, "_getframe") is sys._getframe
        if fn and fn.split(".")[-1] == "dot" and fn.split(".")[0] in ("tl", "triton"):
            prec = {k.arg: k.value for k in node.keywords}
            ieee = isinstance(prec.get("input_precision"), ast.Constant) and prec["input_precision"].value == "ieee"
            no_tf32 = isinstance(prec.get("allow_tf32"), ast.Constant) and prec["allow_tf32"].value is False
            if not (ieee or no_tf32):
                self.add("reduced_precision", node)
        if self.forward_depth and fn and fn.split(".")[-1] in ("train", "eval"):
            self.add("mode_call", node)
        if fn in ("open", "io.open", "builtins.open", "io.FileIO", "FileIO") and _opens_descriptor(node):
            self.add("introspection", node)  # a file descriptor the harness opened (its pipes, its log)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "/proc/" in node.value:
            self.add("introspection", node)
        self.generic_visit(node)

    # assignments --------------------------------------------------------------------------------
    def _targets(self, targets: list[ast.expr], node: ast.AST) -> None:
        for t in targets:
            if isinstance(t, (ast.Tuple, ast.List)):
                self._targets(list(t.elts), node)
                continue
            if isinstance(t, ast.Starred):
                self._targets([t.value], node)
                continue
            root = _root_name(t)
            if isinstance(t, ast.Attribute):
                chain = _dotted(t) or ""
                if chain.startswith("torch.backends."):
                    self.add("library_flag", node)
                elif root in self.module_aliases:
                    self.add("monkeypatch", node)
            if self.forward_depth and root == "self" and isinstance(t, (ast.Attribute, ast.Subscript)):
                if isinstance(t, ast.Attribute) and t.attr == "training":
                    self.add("mode_call", node)
                else:
                    self.add("stateful_forward", node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node.targets, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets([node.target], node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets([node.target], node)
        self.generic_visit(node)

    # forward ------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        is_fwd = node.name == "forward"
        self.forward_depth += is_fwd
        self.generic_visit(node)
        self.forward_depth -= is_fwd

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        if self.forward_depth:
            self.add("exception_fallback", node)
        self.generic_visit(node)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _opens_descriptor(call: ast.Call) -> bool:
    """Whether an ``open()`` call opens a file descriptor rather than a path: an integer first argument, a
    ``.fileno()`` call, or ``closefd=``/``opener=`` (which only make sense for descriptors)."""
    if any(k.arg in ("closefd", "opener") for k in call.keywords):
        return True
    if not call.args:
        return False
    first = call.args[0]
    if isinstance(first, ast.Constant):
        return isinstance(first.value, int) and not isinstance(first.value, bool)
    if isinstance(first, ast.UnaryOp) and isinstance(first.operand, ast.Constant):
        return isinstance(first.operand.value, int)
    return isinstance(first, ast.Call) and (_dotted(first.func) or "").endswith("fileno")


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


_GLOBAL_RE = re.compile(r"__global__\s+(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:void\s+)?([A-Za-z_]\w*)\s*\(")


def defined_kernels(source: str) -> list[str]:
    """Names of GPU kernels the source defines: CUDA ``__global__`` functions (in load_inline / CuPy
    strings), ``@triton.jit`` and ``@cuda.jit`` functions, CuPy ``RawKernel(code, "name")``.

    A profiled kernel whose name contains one of these is the candidate's own (``uses_custom_kernel``)."""
    names = set(_GLOBAL_RE.findall(source))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return sorted(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                chain = _dotted(target) or ""
                if chain.split(".")[-1] in ("jit", "autotune", "heuristics"):
                    names.add(node.name)
        if isinstance(node, ast.Call) and (_dotted(node.func) or "").split(".")[-1] in ("RawKernel", "ElementwiseKernel",
                                                                                      "ReductionKernel"):
            args = list(node.args[1:2]) + [k.value for k in node.keywords if k.arg == "name"]
            names.update(a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return sorted(n for n in names if len(n) > 2)


#: entry-point group of kernel libraries: name = the package a candidate imports, value = the module under which
#: its kernels are defined (``"cudal1.kernelzoo" = "cudal1.kernelzoo.ops"``). A kernel of a library the candidate
#: imports counts as the candidate's own (a released solution built from the zoo's ops runs the zoo's kernels).
KERNEL_LIBRARY_GROUP = "cudal1.kernel_libraries"


def kernel_libraries() -> dict[str, str]:
    """Installed kernel libraries: ``{package: kernel root module}`` (read from entry points, nothing imported)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=KERNEL_LIBRARY_GROUP)}


def imported_modules(source: str) -> set[str]:
    """Dotted names of the modules a source imports (``import a.b`` -> ``a.b``; ``from a import b`` -> ``a``
    and ``a.b``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    mods: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module)
            mods.update(f"{node.module}.{a.name}" for a in node.names)
    return mods


def library_kernels(source: str) -> list[str]:
    """Kernel names (as :func:`defined_kernels` finds them) in the kernel modules of the installed kernel
    libraries (:func:`kernel_libraries`) the source imports, read from their files without importing them."""
    names: set[str] = set()
    for lib, root in kernel_libraries().items():
        if not any(m == lib or m.startswith(lib + ".") for m in imported_modules(source)):
            continue
        for f in module_files(root):
            names.update(defined_kernels(f.read_text(encoding="utf-8", errors="replace")))
    return sorted(names)


def module_location(dotted: str) -> tuple[list[Path], bool] | None:
    """Where module ``dotted`` lies, found on the file system from its top-level package's location (no package
    code runs: ``find_spec`` of a submodule would execute its parents' ``__init__``): ``([file], False)`` for a
    module, ``(folders, True)`` for a package (each portion of a namespace package); None when there is none."""
    parts = dotted.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locs = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not locs:
        return ([Path(spec.origin)], False) if spec.origin and spec.origin.endswith(".py") and len(parts) == 1 else None
    for i, comp in enumerate(parts[1:], start=1):
        dirs = [loc / comp for loc in locs if (loc / comp).is_dir()]
        if not dirs:
            files = [loc / f"{comp}.py" for loc in locs if (loc / f"{comp}.py").is_file()]
            return ([files[0]], False) if files and i == len(parts) - 1 else None
        locs = dirs
    return locs, True


def module_files(dotted: str) -> list[Path]:
    """The ``.py`` files of module or package ``dotted`` (a package: every file under it), found by
    :func:`module_location`."""
    found = module_location(dotted)
    if found is None:
        return []
    paths, package = found
    return [f for loc in paths for f in sorted(loc.rglob("*.py"))] if package else paths


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def analyse(source: str) -> StaticReport:
    """Static flags of a candidate source (empty report if it does not parse: the loader says why)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return StaticReport(())
    v = _Visitor(source)
    v.visit(tree)
    docs = _docstring_lines(tree)
    for rx, flag in ((_PRECISION_RE, "reduced_precision"), (_STREAM_RE, "side_stream"),
                     (_KERNEL_RE, "custom_kernel_source"), (_GRAPH_RE, "cuda_graph"), (_COMPILE_RE, "torch_compile")):
        for i, line in enumerate(v.lines, 1):
            if i in docs:
                continue
            code = line.split("#", 1)[0]
            if rx.search(code):
                v.evidence.setdefault(flag, []).append(f"line {i}: {line.strip()[:120]}")
    flags = tuple(sorted(v.evidence))
    return StaticReport(flags, v.evidence)


def classify_kernels(names: list[str], defined: list[str]) -> tuple[list[str], list[str]]:
    """Split profiled kernel names into (library/PyTorch, the candidate's own).

    A kernel is the candidate's own when its name contains a kernel name the candidate source defines
    (:func:`defined_kernels`): ATen, cuBLAS, cuDNN and torch.compile's
    generated kernels never are, so CUDA-graph-only or library-flag-only speedups show as such.
    """
    pats = [re.compile(rf"(^|[^A-Za-z0-9_]){re.escape(d)}([^A-Za-z0-9_]|$)") for d in defined]
    lib, custom = [], []
    for n in names:
        (custom if any(p.search(n) for p in pats) else lib).append(n)
    return lib, custom
