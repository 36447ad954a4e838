"""``cudal1.kernelzoo.fast_launch``: the handle's argument rules, its fallback to ``kernel[grid]`` (Triton's
interpreter on CPU, real launches on a GPU), and the specialisation key that decides when a compiled kernel
may be launched directly, checked with a fake kernel whose compiled launcher records what it is given.

The key tests are the integrity rules of the fast path: each thing Triton specialises on (dtype, 16-byte
pointer alignment, an int equal to 1, divisible by 16, or past int32, the current device) must send a call
whose value changed back through ``kernel[grid]``; a key that ignored one would launch a binary compiled for
other arguments. Each runs twice: on the keyed path (``bind``'s key and the dict) and on the generated guard
of one key, which must accept exactly the calls with its key.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from cudal1.kernelzoo import fast_launch
from cudal1.kernelzoo.fast_launch import GUARD_AFTER, FastLaunch, ReductionScratch, arg_key, bind, int_class

INTERPRET = bool(getattr(getattr(triton, "knobs", None), "runtime", None) and triton.knobs.runtime.interpret)
NO_INTERPRETER = pytest.mark.skipif(not INTERPRET, reason="CPU launches need TRITON_INTERPRET=1")
NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = [pytest.param("cpu", marks=NO_INTERPRETER), pytest.param("cuda", marks=[pytest.mark.gpu, NO_GPU])]


@triton.jit
def _axpb_kernel(x_ptr, y_ptr, n, a, B: tl.constexpr, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * a + B, mask=mask)


@triton.jit
def _interleaved_kernel(x_ptr, SCALE: tl.constexpr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) * SCALE, mask=mask)


# -- the handle on real launches (interpreter on CPU, the GPU when there is one) -----------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_launch_matches_kernel_grid(device):
    launch = FastLaunch(_axpb_kernel, B=3.0, num_warps=4)  # BLOCK from its default
    # the repeated size: direct launches on a GPU, through the keyed path, then through the guard
    for n in (1, 37, *[200] * (2 + GUARD_AFTER)):
        x = torch.randn(n, device=device)
        y = torch.empty_like(x)
        launch((triton.cdiv(n, 64),), x, y, n, 0.5)
        torch.testing.assert_close(y, x * 0.5 + 3.0)
    if device == "cuda":
        assert launch.compiled_count >= 2  # n == 1 is its own specialisation
        assert launch.guarded_key is not None


@pytest.mark.parametrize("device", DEVICES)
def test_constexpr_between_runtime_parameters(device):
    launch = FastLaunch(_interleaved_kernel, SCALE=2.0, BLOCK=32)
    assert launch.runtime_names == ("x_ptr", "y_ptr", "n")
    for _ in range(2):
        x = torch.randn(50, device=device)
        y = torch.empty_like(x)
        launch((2,), x, y, 50)
        torch.testing.assert_close(y, x * 2.0)


@pytest.mark.parametrize("device", DEVICES)
def test_misaligned_pointer_gives_right_result(device):
    """A view starting 4 bytes into its storage is not 16-byte aligned: it must not run a binary compiled for
    aligned pointers (on a GPU: the vectorised loads of the aligned binary would read the wrong elements)."""
    launch = FastLaunch(_axpb_kernel, B=0.0, BLOCK=64)
    base = torch.randn(257, device=device)
    for x in [base[:256], base[1:]] * (2 + GUARD_AFTER):  # on a GPU: both keys get a guard in turn
        y = torch.empty(256, device=device)
        launch((4,), x, y, 256, 2.0)
        torch.testing.assert_close(y, x * 2.0)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="no parameter 'BLOK'"):
        FastLaunch(_axpb_kernel, B=1.0, BLOK=64)
    with pytest.raises(TypeError, match="constexpr 'B'.*no default"):
        FastLaunch(_axpb_kernel)
    with pytest.raises(TypeError, match="not a tl.constexpr"):
        FastLaunch(_axpb_kernel, B=1.0, n=5)
    launch = FastLaunch(_axpb_kernel, B=1.0)
    assert launch.constexprs == {"B": 1.0, "BLOCK": 64}
    with pytest.raises(TypeError, match="takes 4 runtime arguments"):
        launch((1,), torch.zeros(4), torch.zeros(4), 4)


def test_reduction_scratch_is_one_zeroed_pair_per_device_and_stream():
    scratch = ReductionScratch(parts=8)
    x = torch.randn(3)
    partials, counter = scratch.get(x)
    assert partials.shape == (8,) and partials.dtype == torch.float32
    assert counter.shape == (1,) and counter.dtype == torch.int32 and int(counter) == 0
    again = scratch.get(torch.randn(5))
    assert again[0] is partials and again[1] is counter


# -- the key -------------------------------------------------------------------------------------------------
def test_int_class_follows_triton_specialisation():
    assert int_class(1) == -1  # a constant in the binary
    assert int_class(0) == int_class(32) == int_class(-16) == 1  # i32, divisible by 16
    assert int_class(17) == int_class(-3) == 0
    assert int_class(1 << 31) == 3 and int_class((1 << 31) + 1) == 2  # i64
    assert int_class(1 << 63) == 5 and int_class((1 << 64) - 1) == 4  # u64
    assert int_class(1 << 64) is None and int_class(-(1 << 63) - 1) is None  # Triton: OverflowError
    assert len({int_class(v) for v in (1, 2, 16, 1 << 31, (1 << 31) + 1, 1 << 63, (1 << 63) + 3)}) == 7


def test_arg_key():
    x = torch.zeros(8)
    assert arg_key(x) == (torch.float32, -1, 0)
    assert arg_key(x[1:]) == (torch.float32, -1, 4)  # 4 bytes past a 16-byte boundary
    assert arg_key(x.to(torch.int32))[0] == torch.int32
    assert arg_key(2.0) == 1.5 and arg_key(True) == "b" and arg_key(16) == 1 and arg_key(1) == -1
    assert arg_key(None) is None and arg_key((1, 2)) is None


def test_bind_inlines_arg_key():
    """``bind`` (the fast path's loop) and ``arg_key`` (the documented rule) give one key."""
    x = torch.zeros(40)
    args = [x, x[1:], x.to(torch.float64), torch.nn.Parameter(x), 0, 1, 17, 32, -16, 1 << 31, (1 << 40) + 3,
            1 << 63, 0.5, True, False]
    key, vals = bind(7, args)
    assert key == (7, *(arg_key(a) for a in args))
    assert vals[:4] == [x.data_ptr(), x[1:].data_ptr(), args[2].data_ptr(), args[3].data_ptr()]
    assert vals[4:] == args[4:]
    assert bind(7, [x, None]) is None
    assert bind(7, [x, 1 << 64]) is None and bind(7, [-(1 << 63) - 1]) is None  # no 64-bit type holds it


class _FakeCompiled:
    def __init__(self, tag: int) -> None:
        self.function = f"function{tag}"
        self.packed_metadata = f"meta{tag}"
        self.runs: list[tuple[Any, ...]] = []
        self.run = lambda *a: self.runs.append(a)


class _FakeKernel:
    """Stands for a JITFunction: ``kernel[grid](**kwargs)`` records the call and returns a new compiled
    kernel."""

    def __init__(self) -> None:
        def fn(x_ptr, y_ptr, n, a, B: tl.constexpr, BLOCK: tl.constexpr = 64):
            pass

        self.fn = fn
        self.__name__ = "fake"
        self.pre_run_hooks: list[Any] = []
        self.slow_calls: list[dict[str, Any]] = []
        self.compiled: list[_FakeCompiled] = []

    def __getitem__(self, grid):
        def go(**kwargs):
            self.slow_calls.append(kwargs)
            self.compiled.append(_FakeCompiled(len(self.compiled)))
            return self.compiled[-1]

        return go


class _Chain:
    def __init__(self) -> None:
        self.calls: list[Any] = []


@pytest.fixture
def fake(monkeypatch):
    """A FastLaunch on a fake kernel with the fast path on: CPU tensors (device index -1) on 'current device'
    -1."""
    knobs = types.SimpleNamespace(launch_enter_hook=_Chain(), launch_exit_hook=_Chain())
    state = {"device": -1}
    monkeypatch.setattr(fast_launch, "fast_path_supported", lambda k: True)
    monkeypatch.setattr(fast_launch, "_runtime_knobs", lambda: knobs)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: state["device"], raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda d: 1234, raising=False)
    kernel = _FakeKernel()
    launch = FastLaunch(kernel, B=1.0, num_warps=4)
    return types.SimpleNamespace(kernel=kernel, launch=launch, knobs=knobs, state=state)


def test_second_call_of_a_key_launches_the_compiled_kernel(fake):
    x, y = torch.zeros(64), torch.zeros(64)
    fake.launch((2,), x, y, 64, 0.5)
    assert len(fake.kernel.slow_calls) == 1
    assert fake.kernel.slow_calls[0] == {"x_ptr": x, "y_ptr": y, "n": 64, "a": 0.5, "B": 1.0, "BLOCK": 64,
                                         "num_warps": 4}
    x2, y2 = torch.zeros(64), torch.zeros(64)
    fake.launch((2, 3), x2, y2, 64, 0.25)
    assert len(fake.kernel.slow_calls) == 1
    (run,) = fake.kernel.compiled[0].runs
    assert run == (2, 3, 1, 1234, "function0", "meta0", None, None, None, x2.data_ptr(), y2.data_ptr(), 64,
                   0.25, 1.0, 64)


def _warm(fake, args: list[Any], path: str) -> None:
    """Compile ``args``'s key, then launch it directly until ``path`` ("keyed" or "guard") launches it."""
    fake.launch((1,), *args)
    for _ in range(1 if path == "keyed" else GUARD_AFTER):
        fake.launch((1,), *args)
    assert len(fake.kernel.slow_calls) == 1
    assert (fake.launch.guarded_key is not None) == (path == "guard")


PATHS = ["keyed", "guard"]


class _DeviceTensor(torch.Tensor):
    """A CPU tensor that reports the device index ``_dev`` (a CUDA tensor on another device, for the key)."""

    def get_device(self) -> int:
        return self._dev


def _on_device(t: torch.Tensor, dev: int) -> torch.Tensor:
    out = torch.Tensor._make_subclass(_DeviceTensor, t)
    out._dev = dev
    return out


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("change", ["misaligned", "dtype", "tensor_device", "n_is_1", "n_not_16",
                                    "n_past_int32", "a_int", "a_bool", "device"])
def test_each_specialisation_change_recompiles(fake, change, path):
    """Adversarial: a key (or a guard) that left out any one of these would reuse a binary compiled for other
    arguments."""
    base = torch.zeros(80)
    args: list[Any] = [base[:64], _on_device(torch.zeros(64), -1), 64, 0.5]
    _warm(fake, args, path)
    direct = len(fake.kernel.compiled[0].runs)
    if change == "misaligned":
        args[0] = base[1:65]
    elif change == "dtype":
        args[1] = _on_device(torch.zeros(64, dtype=torch.float64), -1)
    elif change == "tensor_device":
        args[1] = _on_device(torch.zeros(64), 0)
    elif change == "n_is_1":
        args[2] = 1
    elif change == "n_not_16":
        args[2] = 63
    elif change == "n_past_int32":
        args[2] = 1 << 32
    elif change == "a_int":
        args[3] = 2
    elif change == "a_bool":
        args[3] = True
    elif change == "device":
        fake.state["device"] = 0
    fake.launch((1,), *args)
    assert len(fake.kernel.slow_calls) == 2, f"{change}: launched the binary of the first key"
    assert len(fake.kernel.compiled[0].runs) == direct
    fake.launch((1,), *args)
    assert len(fake.kernel.slow_calls) == 2 and len(fake.kernel.compiled[1].runs) == 1


@pytest.mark.parametrize("path", PATHS)
def test_int_no_64_bit_type_holds_always_goes_through_triton(fake, path):
    """An int past u64 would be wrapped by a launcher's conversion (or raise there): Triton raises
    OverflowError for it, so it never gets a key."""
    x, y = torch.zeros(64), torch.zeros(64)
    _warm(fake, [x, y, (1 << 64) - 16, 0.5], path)  # u64, divisible by 16
    for _ in range(2):
        fake.launch((1,), x, y, 1 << 64, 0.5)  # divisible by 16 too
    assert len(fake.kernel.slow_calls) == 3 and fake.launch.compiled_count == 1


@pytest.mark.parametrize("path", PATHS)
def test_same_key_other_values_stays_direct(fake, path):
    """What Triton does not specialise on (pointer values, ints of one class, float values, a tensor's Python
    type) reuses the binary."""
    _warm(fake, [torch.zeros(64), torch.zeros(64), 64, 0.5], path)
    direct = len(fake.kernel.compiled[0].runs)
    fake.launch((1,), torch.zeros(128), torch.zeros(128), 128, -3.0)
    fake.launch((1,), torch.zeros(32), torch.zeros(32), 48, 7.0)
    fake.launch((1,), torch.nn.Parameter(torch.zeros(32)), torch.zeros(32), 0, 7.0)  # not the guard's type
    assert len(fake.kernel.slow_calls) == 1 and len(fake.kernel.compiled[0].runs) == direct + 3


@pytest.mark.parametrize("path", PATHS)
def test_launch_hooks_and_unknown_arguments_go_through_triton(fake, path):
    x, y = torch.zeros(64), torch.zeros(64)
    _warm(fake, [x, y, 64, 0.5], path)
    fake.kernel.pre_run_hooks.append(print)
    fake.launch((1,), x, y, 64, 0.5)
    assert len(fake.kernel.slow_calls) == 2
    fake.kernel.pre_run_hooks.clear()
    fake.knobs.launch_enter_hook.calls.append(print)  # a profiler's hook: Triton must build its metadata
    fake.launch((1,), x, y, 64, 0.5)
    assert len(fake.kernel.slow_calls) == 3
    fake.knobs.launch_enter_hook.calls.clear()
    chain, fake.knobs.launch_exit_hook = fake.knobs.launch_exit_hook, print  # a hook set in place of the chain
    fake.launch((1,), x, y, 64, 0.5)
    assert len(fake.kernel.slow_calls) == 4
    fake.knobs.launch_exit_hook = chain
    fake.launch((1,), x, None, 64, 0.5)  # None: Triton makes it a constexpr
    assert len(fake.kernel.slow_calls) == 5
    with pytest.raises(TypeError, match="takes 4 runtime arguments"):
        fake.launch((1,), x, y, 64)
    fake.launch((1,), x, y, 64, 0.5)
    assert len(fake.kernel.slow_calls) == 5


@pytest.mark.parametrize("n0", [64, 63, 1, 1 << 40])
def test_guard_accepts_exactly_the_calls_with_its_key(fake, monkeypatch, n0):
    """Every argument list of a pool of values (each key part changed alone and several at once): the guard
    (built for a call with ``n == n0``) launches it itself only when its key (``bind``'s) is the guard's and
    its tensors have the guard's types; everything else goes to the keyed path."""
    base = torch.zeros(80)
    kinds = [base[:64], base[1:65], base[4:68], torch.zeros(64, dtype=torch.float64), torch.nn.Parameter(
        torch.zeros(64)), torch.zeros(64, dtype=torch.int32)]
    ints = [64, 48, 1, 63, 0, -16, -3, (1 << 31) - 16, 1 << 31, (1 << 40) + 16, 1 << 50, (1 << 63) + 16, 2.0,
            True]
    floats = [0.5, -1.0, 1, 16, True]
    first = [base[:64], torch.zeros(64), n0, 0.5]
    _warm(fake, first, "guard")
    guard = fake.launch._launch
    keyed: list[tuple[Any, ...]] = []
    monkeypatch.setattr(fake.launch, "_launch_keyed", lambda grid, args: keyed.append(args))
    rng = torch.Generator().manual_seed(0)
    lists = [[x, y, n, a] for x in kinds for y in kinds[:2] for n in ints for a in floats[:2]]
    lists += [[kinds[0], kinds[0], n0, a] for a in floats] + [[kinds[0], kinds[0], n, 0.5] for n in ints]
    for i in torch.randint(0, len(lists), (40,), generator=rng).tolist():
        lists.append(lists[i])
    accepted = 0
    for args in lists:
        for dev in (-1, 0):
            fake.state["device"] = dev
            before = len(keyed)
            guard((1,), tuple(args))
            took = len(keyed) == before
            bound = bind(dev, args)
            want = (bound is not None and bound[0] == fake.launch.guarded_key
                    and all(type(a) is type(b) for a, b in zip(args, first, strict=True)))
            assert took == want, f"device {dev}, args {[arg_key(a) for a in args]}"
            accepted += took
    assert accepted >= 4  # (it is not a guard that refuses everything)


def test_fast_path_needs_a_compiled_kernel_and_can_be_turned_off(monkeypatch):
    assert not fast_launch.fast_path_supported(_FakeKernel())
    assert not fast_launch.fast_path_supported(lambda: None)
    if not INTERPRET:  # a real JITFunction
        assert fast_launch.fast_path_supported(_axpb_kernel)
        monkeypatch.setenv(fast_launch.FAST_LAUNCH_ENV, "0")
        assert not fast_launch.fast_path_supported(_axpb_kernel)
    else:  # the interpreter's InterpretedFunction
        assert not fast_launch.fast_path_supported(_axpb_kernel)
