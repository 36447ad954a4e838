"""The manifest of the Triton kernel specialisations that the ``kernelbench-v0`` solutions compile, recorded on a GPU.

``benchmarks/scripts/kb_triton_manifest.py`` runs every solution (the set and ``pending/``) at its KernelBench task's
original sizes once per architecture family, with ``$CUDAL1_ARCH`` forced so that each family's launch-config table
is the one in use, and records every Triton compilation through ``triton.knobs.runtime.jit_post_compile_hook``.
:mod:`cudal1.kernelzoo.compile_manifest` compiles each recorded specialisation for its family on the CPU. This
module holds what both sides share: the JSON format, how a constexpr value is written down and read back, and the
code hash that tells whether a file changed since the recording.

Format (``FORMAT`` = 1), one JSON object:

* ``environment``: GPU, compute capability, versions, date, command of the recording;
* ``kernels``: kernel id -> :class:`KernelRef` (where the ``@triton.jit`` function is defined);
* ``entries``: one :class:`Entry` per (family, kernel, specialisation): Triton signature types, constexpr values,
  argument attributes (``tt.divisibility``), and the compile options the launch set (``num_warps``, ``num_stages``,
  ``num_ctas`` always; any other option only where it differs from the backend's default);
* ``runs``: family -> solution file -> :class:`SolutionRun` (status, error, kernels it defines but never launched);
* ``files``: every file an entry depends on (its kernel's, the called ``@triton.jit`` helpers', the launcher's, the
  solution's), path -> :func:`code_sha256`, so that a check can tell a manifest older than the code;
* ``notes``: what the recorder wants a reader to know (e.g. values it could not serialise).

Paths are relative to the kernelzoo package folder (``kernelbench_v0/15_....py``, ``ops/group_norm.py``); a kernel
outside it keeps an absolute path.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import numbers
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "LAUNCH_OPTIONS", "MANIFEST", "PACKAGE_DIR", "TARGET_OPTIONS", "Entry", "KernelRef", "Manifest",
           "SolutionRun", "Unserialisable", "code_sha256", "decode_signature", "decode_value", "encode_value"]

FORMAT = 1
PACKAGE_DIR = Path(__file__).resolve().parent
#: the committed manifest (written by benchmarks/scripts/kb_triton_manifest.py on a GPU)
MANIFEST = PACKAGE_DIR / "kernelbench_v0" / "triton_manifest.json"
#: options every entry states, default or not (fp fusion too: its default is due to change in Triton 3.10)
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "enable_fp_fusion")
#: options the backend derives from the target or the install (libdevice path): never replayed on another target;
#: one that differs from the recording target's default is kept in ``Entry.not_replayed``
TARGET_OPTIONS = frozenset({"arch", "backend_name", "extern_libs", "ptx_version", "supported_fp8_dtypes",
                            "deprecated_fp8_dot_operand_dtypes", "warp_size", "max_num_imprecise_acc_default"})


class Unserialisable(ValueError):
    """A specialisation value that :func:`encode_value` cannot write down (its type and repr say which)."""


@dataclass(frozen=True)
class KernelRef:
    """Where a ``@triton.jit`` function is defined.

    qualname: its ``__qualname__`` (module level for every kernel of the zoo).
    module: dotted name of an importable module (``cudal1.kernelzoo.ops.group_norm``), or None for a file loaded
        by path (a solution file).
    file: the defining file, relative to the kernelzoo package folder, or absolute when outside it.
    """

    qualname: str
    module: str | None = None
    file: str | None = None

    @property
    def id(self) -> str:
        """``<file or module>::<qualname>``, the key of ``Manifest.kernels``."""
        return f"{self.file if self.module is None else self.module}::{self.qualname}"


@dataclass(frozen=True)
class Entry:
    """One specialisation of one kernel, as compiled on the recording GPU for one family's launch configs.

    signature: parameter name -> Triton type (``"*fp32"``, ``"i32"``, ``"constexpr"``; lists for tuple arguments).
    constexprs: ``[path, encoded value]`` pairs (path: argument index, then tuple indices); see :func:`encode_value`.
    attrs: ``[path, [[attribute, value], ...]]`` pairs, e.g. ``[[0], [["tt.divisibility", 16]]]``.
    options: compile options: :data:`LAUNCH_OPTIONS` always, any other only where it differs from the default.
    not_replayed: target-derived options (:data:`TARGET_OPTIONS`) that differed from the recording target's default,
        for the record: the check lets the backend derive them for each family.
    shared_bytes, n_regs, n_spills: what the recording GPU's compile used (None: not known).
    used_by: the solution files whose run compiled it (a zoo kernel is compiled once per recording process, so
        for a kernel that several solutions share this may name only some of them).
    problems: what could not be recorded faithfully (an entry with problems cannot be replayed exactly).
    """

    family: str
    kernel: str
    signature: dict[str, Any]
    constexprs: list[list[Any]] = field(default_factory=list)
    attrs: list[list[Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    shared_bytes: int | None = None
    n_regs: int | None = None
    n_spills: int | None = None
    used_by: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    not_replayed: dict[str, Any] = field(default_factory=dict)

    def spec_key(self) -> str:
        """Canonical text of what the compile depends on (family, kernel, types, values, options): equal keys,
        equal compiles."""
        return json.dumps([self.family, self.kernel, self.signature, self.constexprs, self.attrs, self.options],
                          sort_keys=True)

    @property
    def label(self) -> str:
        """Short description for messages: kernel, the launch options and the constexpr values."""
        opts = ", ".join(f"{k}={self.options[k]}" for k in LAUNCH_OPTIONS if k in self.options)
        names = list(self.signature)
        consts = ", ".join(f"{names[p[0]] if len(p) == 1 and p[0] < len(names) else p}={_show(v)}"
                           for p, v in self.constexprs)
        return f"{self.kernel} [{opts}] ({consts})"


def _show(v: Any) -> str:
    """An encoded constexpr value as a person writes it (``fp16``, ``_act``, ``(1, 2)``)."""
    if not isinstance(v, dict):
        return repr(v) if isinstance(v, str) else str(v)
    (tag, val), = v.items()
    if tag == "jit_function":
        return str(val).rsplit("::", 1)[-1]
    if tag == "tuple":
        return "(" + ", ".join(_show(x) for x in val) + ")"
    return _show(val) if tag == "constexpr" else str(val)


@dataclass(frozen=True)
class SolutionRun:
    """One solution file run in one family's pass.

    status: ``ok``; ``error`` (it raised: ``error`` says what); ``crashed`` (its process died); ``timeout``;
        ``not_run`` (the recording's deadline came first); ``incomplete`` (it ran, but recording a compilation
        failed: ``error`` says which, and that specialisation is not in the manifest).
    not_launched: ``@triton.jit`` functions of the solution file with no compilation of their own in this run,
        each ``{"name": ..., "called_from": [kernels of the file whose source names it]}`` (a helper inlined into
        a kernel has callers; one with none is a kernel these sizes never launch).
    """

    status: str
    seconds: float = 0.0
    compiles: int = 0
    error: str = ""
    not_launched: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Manifest:
    """Everything one recording found; see the module docstring for the fields."""

    environment: dict[str, Any]
    kernels: dict[str, KernelRef]
    entries: tuple[Entry, ...]
    runs: dict[str, dict[str, SolutionRun]] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def families(self) -> list[str]:
        """The families a pass was recorded for."""
        return sorted(self.runs) or sorted({e.family for e in self.entries})

    def without(self, gone: set[str]) -> Manifest:
        """This manifest with nothing of the files ``gone`` (manifest paths): their solution runs, their code
        digests, the kernels they define and the entries of those kernels; an entry of another file's kernel that
        only they used goes too (a solution removed after the recording, e.g. one that measured slower than eager)."""
        kernels = {k: v for k, v in self.kernels.items() if v.file not in gone}
        entries = tuple(e for e in self.entries if e.kernel in kernels
                        and not (e.used_by and set(e.used_by) <= gone))
        runs = {f: {s: r for s, r in rs.items() if s not in gone} for f, rs in self.runs.items()}
        files = {f: d for f, d in self.files.items() if f not in gone}
        return Manifest(self.environment, kernels, entries, runs, files, self.notes)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "environment": self.environment,
                "kernels": {k: asdict(v) for k, v in sorted(self.kernels.items())},
                "entries": [asdict(e) for e in self.entries],
                "runs": {f: {s: asdict(r) for s, r in sorted(runs.items())} for f, runs in sorted(self.runs.items())},
                "files": dict(sorted(self.files.items())), "notes": list(self.notes)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Manifest:
        if obj.get("format") != FORMAT:
            raise ValueError(f"triton manifest format {obj.get('format')!r}; this code reads format {FORMAT}: "
                             f"record it again with benchmarks/scripts/kb_triton_manifest.py")
        entries = tuple(Entry(**{**e, "used_by": tuple(e.get("used_by", ())), "problems": tuple(e.get("problems", ()))})
                        for e in obj["entries"])
        runs = {f: {s: SolutionRun(**{**r, "not_launched": tuple(r.get("not_launched", ()))}) for s, r in rs.items()}
                for f, rs in obj.get("runs", {}).items()}
        return cls(environment=obj.get("environment", {}),
                   kernels={k: KernelRef(**v) for k, v in obj["kernels"].items()}, entries=entries, runs=runs,
                   files=obj.get("files", {}), notes=tuple(obj.get("notes", ())))

    def write(self, path: Path) -> None:
        """JSON with one entry per line (a new recording's diff then shows the specialisations that changed)."""
        parts = []
        for key, value in self.to_json().items():
            body = ("[\n" + ",\n".join(json.dumps(e) for e in value) + "\n]" if key == "entries" and value
                    else json.dumps(value, indent=1))
            parts.append(f"{json.dumps(key)}: {body}")
        path.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> Manifest:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))


def _jit_types() -> tuple[type, ...]:
    from triton.runtime import jit

    return tuple(t for t in (getattr(jit, "JITCallable", None), jit.JITFunction) if t is not None)


def encode_value(value: Any, ref_of: Callable[[Any], KernelRef]) -> Any:
    """A constexpr value as JSON: ``None``, bools, ints, strings and finite floats as themselves; ``{"float":
    "inf"}``; ``{"dtype": "fp16"}`` for a ``tl.dtype``; ``{"constexpr": ...}`` for a ``tl.constexpr``;
    ``{"tuple": [...]}``; ``{"jit_function": <kernel id>}`` for a ``@triton.jit`` function passed as a value
    (``ref_of`` names it, and the caller keeps that :class:`KernelRef`).

    Raises:
        Unserialisable: any other value (its type and repr in the message).
    """
    import triton.language as tl

    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, numbers.Integral):  # numpy integers, say
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, tl.constexpr):
        return {"constexpr": encode_value(value.value, ref_of)}
    if isinstance(value, tl.dtype):
        if not tl.dtype.is_dtype(str(value)):
            raise Unserialisable(f"tl type {value!s} ({type(value).__name__}) is not a scalar dtype")
        return {"dtype": str(value)}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"tuple": [encode_value(v, ref_of) for v in value]}
    if isinstance(value, _jit_types()):
        return {"jit_function": ref_of(value).id}
    raise Unserialisable(f"{type(value).__module__}.{type(value).__qualname__}: {value!r:.120}")


def decode_value(obj: Any, resolve: Callable[[str], Any]) -> Any:
    """The value :func:`encode_value` wrote; ``resolve(kernel id)`` gives back a ``@triton.jit`` function.

    Raises:
        Unserialisable: an object the encoder marks as not serialisable (``{"unserialisable": ...}``).
    """
    if not isinstance(obj, dict):
        return obj
    import triton.language as tl

    (tag, val), = obj.items()
    if tag == "float":
        return float(val)
    if tag == "constexpr":
        return tl.constexpr(decode_value(val, resolve))
    if tag == "dtype":
        return tl.dtype(val)
    if tag == "tuple":
        return tuple(decode_value(v, resolve) for v in val)
    if tag == "jit_function":
        return resolve(val)
    raise Unserialisable(f"the recording could not serialise this value: {val}")


def decode_signature(sig: dict[str, Any]) -> dict[str, Any]:
    """Signature types as Triton takes them (JSON lists back to tuples, for tuple arguments)."""
    def tup(v: Any) -> Any:
        return tuple(tup(x) for x in v) if isinstance(v, list) else v

    return {k: tup(v) for k, v in sig.items()}


def code_sha256(path: Path) -> str:
    """Hash of a Python file's code: its text without docstrings, trailing spaces and blank lines, so that a
    docstring edit (a solution's measured speedup, say) does not make a recording stale, while any change of code
    or comments does. Line-based, so the same on every Python version."""
    text = path.read_text(encoding="utf-8")
    drop: set[int] = set()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                drop.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    kept = [line.rstrip() for i, line in enumerate(text.splitlines(), 1) if i not in drop and line.strip()]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()
