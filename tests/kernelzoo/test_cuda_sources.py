"""The zoo's raw CUDA C: every ``CUDA_SOURCES`` entry compiles with nvcc for sm80/86/89/90 (each declared
kernel present for each architecture, no register spills) and with NVRTC (the compiler CuPy uses at run
time); the loader (cudal1.kernelzoo.cuda_jit) without a GPU: errors without CuPy or CUDA, backend choice and
its environment override, the module cache, argument passing; the CUDA launchers' arguments match their C
signatures; on a GPU, every kernel against its reference (cuda_check.self_check)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from cudal1.kernelzoo import arch, cuda_jit
from cudal1.kernelzoo.cuda_check import cuda_sources
from cudal1.kernelzoo.kernel_specs import CudaSource
from cudal1.kernelzoo.ops import _elementwise, _rows_cuda

FAMILIES = {"sm80": 80, "sm86": 86, "sm89": 89, "sm90": 90}
SOURCES = cuda_sources()
OPS = sorted(mod.__name__.rsplit(".", 1)[1] for mod, _ in SOURCES)
ELEMENTWISE = {"relu", "gelu", "silu"}


def _wheel_dirs() -> list[Path]:
    try:
        import nvidia  # namespace package of NVIDIA's CUDA wheels (nvidia-cuda-nvcc, nvidia-cuda-nvrtc, ...)
    except ImportError:
        return []
    return [Path(p) for p in nvidia.__path__]


def find_nvcc() -> str | None:
    """nvcc of the nvidia-cuda-nvcc wheel (root dev dependency), else the one on PATH."""
    for root in _wheel_dirs():
        for cand in sorted(root.glob("*/bin/nvcc")):
            if cand.is_file():
                return str(cand)
    return shutil.which("nvcc")


def assert_compiles_without_spills(nvcc: str, src, arch: str, tmp_path) -> None:
    """nvcc builds ``src`` (a CudaSource) for ``arch`` (e.g. ``"sm_90"``) and ptxas reports no register spills."""
    cu = tmp_path / f"{src.name}.cu"
    cu.write_text(src.code)
    r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{src.name}: {r.stderr[-2000:]}"
    spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
    assert spills and all(s == "0" for s in spills), f"{src.name} {arch}: {r.stderr[-1500:]}"


# ---------------------------------------------------------------- the sources themselves


def test_every_op_declares_its_cuda_sources():
    assert set(OPS) >= {"relu", "gelu", "silu", "softmax", "layer_norm", "rms_norm"}
    names = [src.name for _, src in SOURCES]
    assert len(names) == len(set(names)), f"CudaSource names must be unique: {names}"
    kernels = [k for _, src in SOURCES for k in src.kernels]
    assert len(kernels) == len(set(kernels)), f"kernel names must be unique across the zoo: {kernels}"


@pytest.mark.parametrize("mod, src", SOURCES, ids=[s.name for _, s in SOURCES])
def test_source_is_nvrtc_shaped_and_declares_exactly_its_kernels(mod, src):
    code = src.code
    assert "#include" not in code, "NVRTC sources take no headers"
    defined = re.findall(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(', code)
    assert sorted(defined) == sorted(src.kernels), (defined, src.kernels)
    assert code.count("__global__") == len(src.kernels)
    op = mod.__name__.rsplit(".", 1)[1]
    assert callable(getattr(mod, f"{op}_launch_cuda")) and callable(getattr(mod, f"{op}_launch"))
    assert f"{op}_launch_cuda" in mod.__all__ and "CUDA_SOURCES" in mod.__all__
    for family in arch.CAPABILITY:
        assert mod.CONFIGS[family]["backend"] in cuda_jit.BACKENDS


def _c_params(src, kernel: str) -> list[str]:
    """C types of ``kernel``'s parameters, e.g. ['const float*', 'float*', 'long long', 'int']."""
    m = re.search(rf"{kernel}\s*\(([^)]*)\)", src.code)
    params = [" ".join(p.replace("__restrict__", "").split()[:-1]) for p in m.group(1).split(",")]
    return [p.replace(" *", "*") for p in params]


C_TYPE_OF_ARG = {np.int32: "int", np.int64: "long long", np.float32: "float"}


def _record_launches(monkeypatch) -> list:
    calls = []
    monkeypatch.setattr(cuda_jit, "launch", lambda *a, **k: calls.append(a))
    return calls


@pytest.mark.parametrize("mod, src", SOURCES, ids=[s.name for _, s in SOURCES])
@pytest.mark.parametrize("shape, aligned", [((5, 123), True), ((4, 2048), True), ((3, 100003), True), ((8, 1024), False)])
def test_cuda_launcher_arguments_match_the_c_signature(monkeypatch, mod, src, shape, aligned):
    """The launchers run on CPU tensors with cuda_jit.launch recorded: grid, block and every argument's type
    against the kernel's C parameter list; float4 paths only where aligned."""
    op = mod.__name__.rsplit(".", 1)[1]
    calls = _record_launches(monkeypatch)
    g = torch.Generator().manual_seed(0)
    n = shape[-1]
    x = torch.randn(shape[0] * n + 1, generator=g)
    x = (x[:-1] if aligned else x[1:]).view(shape)
    extra = {"layer_norm": (torch.randn(n), torch.randn(n), 1e-5), "rms_norm": (torch.randn(n), 1e-6)}.get(op, ())
    y = getattr(mod, f"{op}_launch_cuda")(x, *extra)
    assert y.shape == x.shape and y.dtype == torch.float32
    (source, kernel, grid, block, args, device), = calls
    assert source is src and kernel in src.kernels and device == x.device
    params = _c_params(src, kernel)
    assert len(args) == len(params), (params, args)
    for a, p in zip(args, params):
        if isinstance(a, torch.Tensor):
            assert p.endswith("float*") and a.dtype == torch.float32 and a.is_contiguous()
        else:
            assert C_TYPE_OF_ARG[type(a)] == p, (p, type(a))
    vec = int(args[-1])
    threads = block[0]
    assert threads % 32 == 0 and 32 <= threads <= 1024
    if op in ELEMENTWISE:
        assert args[0].data_ptr() == x.data_ptr() and args[1] is y
        assert int(args[2]) == x.numel() and grid[0] * threads * 4 * _elementwise.ELEMENTWISE_UNROLL >= x.numel()
        assert vec == int(aligned)
    else:
        n_at = sum(isinstance(a, torch.Tensor) for a in args)  # (x, *weights, y, n, *scalars, vec)
        assert grid == (shape[0],) and int(args[n_at]) == n and args[n_at - 1] is y
        assert vec == int(aligned and n % 4 == 0)
        if n <= _rows_cuda.ROW_REGS * 1024:  # rows that fit are held in registers
            assert n <= _rows_cuda.ROW_REGS * threads


def test_row_threads_follow_the_config():
    cfg = {"cuda_max_threads": 1024, "cuda_cols_per_thread": 16}
    assert [_rows_cuda.row_threads(n, cfg) for n in (1, 123, 4096, 8192, 16384, 10**6)] == [32, 32, 256, 512, 1024, 1024]
    with pytest.raises(ValueError, match="cuda_cols_per_thread"):
        _rows_cuda.row_threads(10, dict(cfg, cuda_cols_per_thread=64))
    with pytest.raises(ValueError, match="cuda_max_threads"):
        _rows_cuda.row_threads(10, dict(cfg, cuda_max_threads=96))


def test_cuda_launchers_refuse_other_dtypes(monkeypatch):
    from cudal1.kernelzoo.ops import relu, softmax

    _record_launches(monkeypatch)
    for fn in (relu.relu_launch_cuda, softmax.softmax_launch_cuda):
        with pytest.raises(TypeError, match="float32"):
            fn(torch.randn(4, 8, dtype=torch.float64))


# ---------------------------------------------------------------- nvcc and NVRTC


NVCC = find_nvcc()
HOST_CXX = shutil.which("g++")  # nvcc preprocesses with a host compiler even for device-only output


@pytest.mark.skipif(NVCC is None, reason="no nvcc: `uv sync` installs the nvidia-cuda-nvcc wheel (dev group)")
@pytest.mark.skipif(HOST_CXX is None, reason="nvcc needs a host C++ compiler (g++) on PATH")
@pytest.mark.parametrize("mod, src", SOURCES, ids=[s.name for _, s in SOURCES])
def test_nvcc_compiles_every_source_for_every_family(tmp_path, mod, src):
    cu = tmp_path / f"{src.name}.cu"
    cu.write_text(src.code)
    gencode = [a for cc in FAMILIES.values() for a in ("-gencode", f"arch=compute_{cc},code=sm_{cc}")]
    cmd = [NVCC, "-ccbin", HOST_CXX, "--fatbin", *cuda_jit.DEFAULT_OPTIONS, "--resource-usage", "-Werror", "all-warnings", *gencode,
           "-o", str(tmp_path / f"{src.name}.fatbin"), str(cu)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    log = res.stdout + res.stderr
    compiled = re.findall(r"Compiling entry function '(\w+)' for 'sm_(\d+)'", log)
    assert sorted(compiled) == sorted((k, str(cc)) for k in src.kernels for cc in FAMILIES.values()), log
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert len(frames) == len(compiled) and all(f == ("0", "0", "0") for f in frames), \
        f"register arrays must stay in registers (no stack frame, no spills):\n{log}"
    assert (tmp_path / f"{src.name}.fatbin").stat().st_size > 1000


def _load_nvrtc():
    for root in _wheel_dirs():
        for lib in sorted(root.glob("*/lib/libnvrtc.so*")):
            if "builtins" not in lib.name:
                try:
                    return ctypes.CDLL(str(lib))
                except OSError:
                    continue
    return None


NVRTC = _load_nvrtc()


def nvrtc_compile(code: str, cc: int) -> bytes:
    """cubin of ``code`` for sm_<cc> through NVRTC's C API (as CuPy compiles at run time, minus the device)."""
    nv = NVRTC
    prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), b"zoo.cu", 0, None, None) == 0
    opts = [f"--gpu-architecture=sm_{cc}".encode(), *(o.encode() for o in cuda_jit.DEFAULT_OPTIONS)]
    try:
        rc = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, log)
        assert rc == 0, f"NVRTC failed for sm_{cc}:\n{log.value.decode(errors='replace')}"
        nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        assert nv.nvrtcGetCUBIN(prog, cubin) == 0
        return cubin.raw
    finally:
        nv.nvrtcDestroyProgram(ctypes.byref(prog))


@pytest.mark.skipif(NVRTC is None, reason="no libnvrtc in the NVIDIA wheels (torch's CUDA build ships one)")
@pytest.mark.parametrize("mod, src", SOURCES, ids=[s.name for _, s in SOURCES])
def test_nvrtc_compiles_every_source(mod, src):
    for cc in FAMILIES.values():
        cubin = nvrtc_compile(src.code, cc)
        assert cubin[:4] == b"\x7fELF" and all(k.encode() in cubin for k in src.kernels)


def test_nvrtc_check_can_fail():
    if NVRTC is None:
        pytest.skip("no libnvrtc")
    with pytest.raises(AssertionError, match="NVRTC failed"):
        nvrtc_compile('#include <cstdio>\nextern "C" __global__ void k() {}', 90)


# ---------------------------------------------------------------- the loader without a GPU


@pytest.fixture
def no_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    cuda_jit._import_cupy.cache_clear()
    yield
    cuda_jit._import_cupy.cache_clear()


class FakeCupy:
    """Just enough of cupy for the loader: RawModule / get_function / Device / ExternalStream, recorded."""

    def __init__(self):
        self.modules, self.launches, self.devices = [], [], []
        fake = self

        class Ctx:
            def __init__(self, *a):
                self.args = a

            def __enter__(self):
                fake.devices.append(self.args)

            def __exit__(self, *exc):
                return False

        class RawModule:
            def __init__(self, code, options):
                self.code, self.options, self.got = code, options, []
                fake.modules.append(self)

            def get_function(self, name):
                self.got.append(name)
                return lambda grid, block, args, shared_mem=0: fake.launches.append((name, grid, block, args))

        self.RawModule = RawModule
        class Stream:
            @staticmethod
            def from_external(obj):
                return Ctx("from_external", obj.__cuda_stream__())

        self.cuda = SimpleNamespace(Device=Ctx, ExternalStream=Ctx, Stream=Stream)


@pytest.fixture
def fake_cupy(monkeypatch):
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    cuda_jit._import_cupy.cache_clear()
    monkeypatch.setattr(cuda_jit, "_MODULES", {})
    monkeypatch.setattr(cuda_jit, "_KERNELS", {})
    monkeypatch.setattr(cuda_jit, "_STREAMS", {})
    yield fake
    cuda_jit._import_cupy.cache_clear()


def test_missing_cupy_raises_naming_the_extra(no_cupy):
    from cudal1.kernelzoo.ops import layer_norm, relu

    assert not cuda_jit.cupy_available()
    with pytest.raises(cuda_jit.CudaBackendUnavailable, match=r"cudal1-kernelzoo\[cuda13\].*\[cuda12\]"):
        cuda_jit.require_cupy()
    with pytest.raises(cuda_jit.CudaBackendUnavailable, match="CuPy"):
        relu.relu_launch_cuda(torch.randn(10))
    with pytest.raises(cuda_jit.CudaBackendUnavailable, match="CuPy"):
        layer_norm.layer_norm_launch_cuda(torch.randn(2, 8), torch.ones(8), torch.zeros(8))


def test_cpu_tensors_are_refused_by_the_cuda_launch(fake_cupy):
    from cudal1.kernelzoo.ops import softmax

    with pytest.raises(cuda_jit.CudaBackendUnavailable, match="CUDA tensors"):
        softmax.softmax_launch_cuda(torch.randn(3, 40))
    assert fake_cupy.launches == []


@pytest.mark.parametrize("env, config, cupy, has_cuda, want", [
    (None, "triton", True, True, "triton"),
    (None, "cuda", True, True, "cuda"),
    ("triton", "cuda", True, True, "triton"),
    ("cuda", "triton", True, True, "cuda"),
    ("cuda", "triton", False, True, "triton"),   # no CuPy: silently Triton
    ("cuda", "cuda", True, False, "triton"),     # no CUDA C for this input (e.g. fp16): Triton
])
def test_backend_choice_and_env_override(monkeypatch, env, config, cupy, has_cuda, want):
    monkeypatch.delenv(arch.ENV, raising=False)
    if env is None:
        monkeypatch.delenv(cuda_jit.BACKEND_ENV, raising=False)
    else:
        monkeypatch.setenv(cuda_jit.BACKEND_ENV, env)
    monkeypatch.setattr(cuda_jit, "cupy_available", lambda: cupy)
    table = {f: {"backend": config} for f in arch.CAPABILITY}
    assert cuda_jit.choose_backend(table, has_cuda=has_cuda) == want


def test_backend_follows_the_family_and_rejects_bad_values(monkeypatch):
    monkeypatch.delenv(cuda_jit.BACKEND_ENV, raising=False)
    table = {"sm80": {"backend": "triton"}, "sm86": {}, "sm89": {"backend": "triton"}, "sm90": {"backend": "cuda"}}
    monkeypatch.setenv(arch.ENV, "sm90")
    assert cuda_jit.requested_backend(table) == "cuda"
    monkeypatch.setenv(arch.ENV, "sm86")
    assert cuda_jit.requested_backend(table) == "triton"  # no key: triton
    monkeypatch.setenv(cuda_jit.BACKEND_ENV, "cutlass")
    with pytest.raises(ValueError, match="CUDAL1_BACKEND='cutlass'"):
        cuda_jit.requested_backend(table)
    monkeypatch.delenv(cuda_jit.BACKEND_ENV)
    with pytest.raises(ValueError, match="config backend 'tvm'"):
        cuda_jit.requested_backend({f: {"backend": "tvm"} for f in arch.CAPABILITY})


def test_public_ops_never_take_cuda_for_cpu_tensors(monkeypatch, fake_cupy):
    from cudal1.kernelzoo.ops import relu

    monkeypatch.setenv(cuda_jit.BACKEND_ENV, "cuda")
    x = torch.randn(5, 7)
    assert not cuda_jit.use_cuda(relu.CONFIGS, x)
    assert torch.equal(relu.relu(x), torch.relu(x)) and fake_cupy.launches == []


def test_cache_key_separates_code_device_and_options():
    from cudal1.kernelzoo.kernel_specs import CudaSource

    a = CudaSource("k", 'extern "C" __global__ void k() {}', ("k",))
    b = CudaSource("k", 'extern "C" __global__ void k() { }', ("k",))
    key = cuda_jit.cache_key(a, 0)
    assert key == cuda_jit.cache_key(a, 0, cuda_jit.DEFAULT_OPTIONS)
    assert len({key, cuda_jit.cache_key(b, 0), cuda_jit.cache_key(a, 1), cuda_jit.cache_key(a, 0, ("-G",))}) == 4


def test_modules_compile_once_per_key_and_launch_on_torchs_stream(monkeypatch, fake_cupy):
    from cudal1.kernelzoo.ops import relu

    src = relu.CUDA_SOURCES[0]
    monkeypatch.setattr(torch.cuda, "current_stream", lambda index=None: SimpleNamespace(cuda_stream=4242))
    x = torch.randn(100)
    for _ in range(3):
        cuda_jit.launch(src, src.kernels[0], (1,), (256,), (x, x, cuda_jit.i64(100), cuda_jit.i32(1)),
                        torch.device("cuda", 0))
    assert len(fake_cupy.modules) == 1 and fake_cupy.modules[0].got == [src.kernels[0]]
    assert fake_cupy.modules[0].options == cuda_jit.DEFAULT_OPTIONS and fake_cupy.modules[0].code == src.code
    name, grid, block, args = fake_cupy.launches[-1]
    assert (name, grid, block) == (src.kernels[0], (1,), (256,)) and len(fake_cupy.launches) == 3
    assert type(args[0]) is np.uint64 and int(args[0]) == x.data_ptr()
    # torch's stream entered through the CUDA stream protocol (CuPy's Stream.from_external)
    assert ("from_external", (0, 4242)) in fake_cupy.devices
    cuda_jit.get_kernel(src, src.kernels[0], 1)  # another device: another module
    assert len(fake_cupy.modules) == 2
    with pytest.raises(KeyError, match="declares kernels"):
        cuda_jit.get_kernel(src, "zoo_nope", 0)


def test_older_cupy_without_from_external_gets_external_stream(monkeypatch, fake_cupy):
    from cudal1.kernelzoo.ops import relu

    del fake_cupy.cuda.Stream
    src = relu.CUDA_SOURCES[0]
    monkeypatch.setattr(torch.cuda, "current_stream", lambda index=None: SimpleNamespace(cuda_stream=77))
    x = torch.randn(8)
    cuda_jit.launch(src, src.kernels[0], (1,), (32,), (x, x, cuda_jit.i64(8), cuda_jit.i32(1)), torch.device("cuda", 0))
    assert (77, 0) in fake_cupy.devices  # ExternalStream(torch's stream, device 0) entered


def test_kernel_args_refuse_python_numbers():
    assert cuda_jit.kernel_args((np.float32(1.5), np.int32(3)))[0].dtype == np.float32
    with pytest.raises(TypeError, match="np.int32"):
        cuda_jit.kernel_args((3,))
    with pytest.raises(TypeError, match="np.float32"):
        cuda_jit.kernel_args((1e-5,))


# ---------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_every_cuda_kernel_matches_its_reference_on_gpu():
    pytest.importorskip("cupy")
    from cudal1.kernelzoo.cuda_check import self_check

    results = self_check()
    bad = [r for r in results if not r.ok]
    assert len(results) >= 6 * 8 and not bad, bad


def test_shared_memory_limit_is_raised_once_per_size(monkeypatch):
    """``cuda_jit.allow_shared_memory`` (what ``cuda_jit.run`` calls above 48 KB): the kernel's attribute is set to the
    size asked for, and a second launch of the same size does not compile or set it again."""
    fetched = []
    fn = SimpleNamespace(max_dynamic_shared_size_bytes=0)
    monkeypatch.setattr(cuda_jit, "get_kernel", lambda src, k, i: fetched.append((k, i)) or fn)
    monkeypatch.setattr(cuda_jit, "_SHARED_LIMITS", {})
    src = CudaSource("smem_probe", 'extern "C" __global__ void k() {}', ("k",))
    dev = torch.device("cuda", 0)
    cuda_jit.allow_shared_memory(src, "k", dev, 64 * 1024)
    cuda_jit.allow_shared_memory(src, "k", dev, 64 * 1024)
    assert fn.max_dynamic_shared_size_bytes == 64 * 1024 and fetched == [("k", 0)]
    cuda_jit.allow_shared_memory(src, "k", dev, 100 * 1024)
    assert fn.max_dynamic_shared_size_bytes == 100 * 1024 and len(fetched) == 2
    cuda_jit.allow_shared_memory(src, "k", dev, cuda_jit.SHARED_MEM_DEFAULT)  # within the default: nothing to do
    assert len(fetched) == 2
