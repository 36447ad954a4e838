"""Autotuning of launch configs (cudal1.kernelzoo.autotune): the fastest candidate wins, is cached in memory
and on disk, is audited with every candidate's time, and the modes/overrides give the per-family default."""

from __future__ import annotations

import json
import warnings

import pytest
import torch

from cudal1.kernelzoo import autotune
from cudal1.kernelzoo.arch import ENV as ARCH_ENV

CANDIDATES = ({"BLOCK": 1024}, {"BLOCK": 2048}, {"BLOCK": 4096})
DEFAULT = {"BLOCK": 512}
MS = {1024: 3.0, 2048: 1.0, 4096: 2.0}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv(autotune.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(autotune.ENV, "on")
    monkeypatch.delenv(ARCH_ENV, raising=False)
    autotune.clear_memory()
    yield
    autotune.clear_memory()


class Clock:
    """A fake timer: runs the call once (so ``run`` is exercised) and reports MS for the config it ran."""

    def __init__(self, ms=MS):
        self.ms, self.calls, self.last = ms, 0, None

    def run(self, cfg):
        self.last = cfg["BLOCK"]
        if self.ms.get(cfg["BLOCK"]) is None:
            raise RuntimeError(f"BLOCK={cfg['BLOCK']} does not launch here")

    def __call__(self, fn):
        self.calls += 1
        fn()
        return self.ms[self.last]


def test_fastest_wins_and_is_persisted_with_every_time():
    clock = Clock()
    got = autotune.choose("relu|dev|sm90|float32|1024", CANDIDATES, clock.run, DEFAULT, timer=clock)
    assert got is CANDIDATES[1] and clock.calls == 3
    # cached in memory: no more timing
    assert autotune.choose("relu|dev|sm90|float32|1024", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    assert clock.calls == 3
    data = json.loads(autotune.cache_path().read_text())
    entry = data["relu|dev|sm90|float32|1024"]
    assert entry["config"] == {"BLOCK": 2048} and entry["ms"] == 1.0
    assert [c["ms"] for c in entry["candidates"]] == [3.0, 1.0, 2.0]
    # a new process (memory cleared) reads the winner from disk without timing
    autotune.clear_memory()
    never = Clock(ms={})
    assert autotune.choose("relu|dev|sm90|float32|1024", CANDIDATES, never.run, DEFAULT, timer=never) is CANDIDATES[1]
    assert never.calls == 0


def test_keys_are_separate_and_other_processes_winners_kept():
    clock = Clock()
    assert autotune.choose("a", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    autotune.clear_memory()
    slow2048 = Clock(ms={1024: 1.0, 2048: 5.0, 4096: 2.0})
    assert autotune.choose("b", CANDIDATES, slow2048.run, DEFAULT, timer=slow2048) is CANDIDATES[0]
    data = json.loads(autotune.cache_path().read_text())
    assert data["a"]["config"] == {"BLOCK": 2048} and data["b"]["config"] == {"BLOCK": 1024}


def test_cache_mode_never_times(monkeypatch):
    monkeypatch.setenv(autotune.ENV, "cache")
    clock = Clock()
    assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is DEFAULT
    assert clock.calls == 0 and not autotune.cache_path().exists()


def test_failing_candidates_skipped_and_recorded():
    clock = Clock(ms={1024: 4.0, 2048: None, 4096: 2.0})
    assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[2]
    entry = json.loads(autotune.cache_path().read_text())["k"]
    assert "does not launch" in entry["errors"]["1"] and entry["candidates"][1]["ms"] is None


def test_all_failing_gives_default_and_caches_nothing():
    clock = Clock(ms={1024: None, 2048: None, 4096: None})
    assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is DEFAULT
    assert not autotune.cache_path().exists()


def test_stale_winner_is_tuned_again():
    autotune.choose("k", ({"BLOCK": 256},), lambda c: None, DEFAULT, timer=lambda fn: 1.0)
    clock = Clock()
    assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    assert clock.calls == 3


def test_corrupt_cache_file_warns_and_tunes(tmp_path):
    path = autotune.cache_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    clock = Clock()
    with pytest.warns(UserWarning, match="unreadable"):
        assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    assert json.loads(path.read_text())["k"]["config"] == {"BLOCK": 2048}


def test_unwritable_cache_warns_once_and_keeps_winner_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(autotune.CACHE_ENV, str(blocker / "sub"))  # a folder under a file: cannot be made
    clock = Clock()
    with pytest.warns(UserWarning, match="cannot write"):
        assert autotune.choose("k1", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        autotune.choose("k2", CANDIDATES, clock.run, DEFAULT, timer=clock)  # no second warning
    assert autotune.choose("k1", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    assert clock.calls == 6


def test_tuned_gives_default_off_cuda_when_off_or_arch_forced(monkeypatch):
    clock = Clock()
    assert autotune.tuned("relu", ("float32", 1024), CANDIDATES, clock.run, DEFAULT, torch.device("cpu"),
                          timer=clock) is DEFAULT
    # a CUDA device is never queried when the family is forced or tuning is off
    monkeypatch.setenv(ARCH_ENV, "sm80")
    assert autotune.tuned("relu", ("float32", 1024), CANDIDATES, clock.run, DEFAULT, torch.device("cuda", 0),
                          timer=clock) is DEFAULT
    monkeypatch.delenv(ARCH_ENV)
    monkeypatch.setenv(autotune.ENV, "off")
    assert autotune.tuned("relu", ("float32", 1024), CANDIDATES, clock.run, DEFAULT, torch.device("cuda", 0),
                          timer=clock) is DEFAULT
    assert clock.calls == 0


def test_default_mode_uses_cached_winners_but_never_times(monkeypatch):
    clock = Clock()
    autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock)
    monkeypatch.delenv(autotune.ENV)
    assert autotune.mode() == "cache"
    assert autotune.choose("k", CANDIDATES, clock.run, DEFAULT, timer=clock) is CANDIDATES[1]
    assert autotune.choose("new", CANDIDATES, clock.run, DEFAULT, timer=clock) is DEFAULT
    assert clock.calls == 3


def test_bad_mode_says_what_is_allowed(monkeypatch):
    monkeypatch.setenv(autotune.ENV, "sometimes")
    with pytest.raises(ValueError, match="on, cache, off"):
        autotune.mode()


@pytest.mark.parametrize("n, bucket", [(0, 0), (1, 1), (2, 2), (3, 4), (1024, 1024), (1025, 2048)])
def test_numel_bucket(n, bucket):
    assert autotune.numel_bucket(n) == bucket


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("op", ["relu", "gelu", "silu", "tanh", "hardswish", "elu", "leaky_relu", "softplus"])
def test_gpu_every_candidate_correct_and_public_op_tunes(op):
    import importlib

    from cudal1.kernelzoo.ops import _elementwise

    mod = importlib.import_module(f"cudal1.kernelzoo.ops.{op}")
    public, ref = getattr(mod, op), getattr(mod, f"{op}_ref")
    x = torch.randn(3, 1000, 37, device="cuda") * 3
    want = ref(x)
    launch = getattr(mod, f"{op}_launch")
    for cfg in _elementwise.TRITON_CANDIDATES:
        torch.testing.assert_close(launch(x, config=cfg), want, rtol=1e-5, atol=1e-6, msg=f"{op} {cfg}")
    launch_cuda = getattr(mod, f"{op}_launch_cuda", None)
    if launch_cuda is not None:
        pytest.importorskip("cupy")
        for cfg in _elementwise.CUDA_CANDIDATES:
            torch.testing.assert_close(launch_cuda(x, config=cfg), want, rtol=1e-5, atol=1e-6, msg=f"{op} {cfg}")
    torch.testing.assert_close(public(x), want, rtol=1e-5, atol=1e-6)
    entries = json.loads(autotune.cache_path().read_text())
    assert any(k.startswith(f"{op}|") for k in entries), entries.keys()


def test_elementwise_config_is_memoized_per_input_class_and_environment(monkeypatch):
    """The config of an elementwise op is resolved once per input class (host time per call matters for a
    1.5 ms op timed from the host), and resolved again when anything that steers the choice changes."""
    from cudal1.kernelzoo.ops import _elementwise

    monkeypatch.setenv(autotune.ENV, "cache")
    runs = []
    table = _elementwise.CONFIGS
    x = torch.randn(64)
    first = _elementwise.elementwise_config("memo_test", x, table, runs.append, has_cuda=False)
    assert first["BLOCK"] == table["sm80"]["BLOCK"] or torch.cuda.is_available()
    assert _elementwise.elementwise_config("memo_test", x, table, runs.append, has_cuda=False) is first
    # another input class, another table, a forced family, a cleared autotune memory: resolved again
    bigger = _elementwise.elementwise_config("memo_test", torch.randn(4096), table, runs.append, has_cuda=False)
    assert bigger is not first
    monkeypatch.setenv(ARCH_ENV, "sm86")
    forced = _elementwise.elementwise_config("memo_test", x, table, runs.append, has_cuda=False)
    assert forced is not first and forced["BLOCK"] == table["sm86"]["BLOCK"]
    monkeypatch.delenv(ARCH_ENV)
    assert _elementwise.elementwise_config("memo_test", x, table, runs.append, has_cuda=False) is first
    autotune.clear_memory()
    again = _elementwise.elementwise_config("memo_test", x, table, runs.append, has_cuda=False)
    assert again is not first and again == first
    assert runs == []  # nothing was launched to choose
