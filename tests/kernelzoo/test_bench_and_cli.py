"""`cudal1-eval --solutions kernelzoo` finds the released solutions through the entry point, and the kernel-zoo
benchmark's report turns measured records into the summary against the issue's targets."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from cudal1.harness.cli import main
from cudal1.harness.solutions import SolutionSetError, load_solutions, resolve_solutions
from cudal1.harness.suite import load_suite
from cudal1.kernelzoo.solutions import available, solutions_dir

ROOT = Path(__file__).resolve().parents[2]


def _installed() -> bool:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("cudal1-kernelzoo")
        return True
    except PackageNotFoundError:
        return False


# entry points exist only for an installed package (uv installs the workspace); a bare PYTHONPATH has none
needs_install = pytest.mark.skipif(not _installed(), reason="cudal1-kernelzoo is not installed (PYTHONPATH only)")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_kernelzoo", ROOT / "apps" / "bench_kernelzoo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_kernelzoo"] = mod
    spec.loader.exec_module(mod)
    return mod


@needs_install
def test_solutions_name_resolves_to_the_released_folder():
    folder, origin = resolve_solutions("kernelzoo")
    assert folder == solutions_dir() and origin == "solutions:kernelzoo"
    pairs, unknown = load_solutions("kernelzoo", load_suite("builtin"))
    assert not unknown
    assert sorted(t.name for t, _ in pairs) == sorted(available())
    assert all(c.origin == "solutions:kernelzoo" for _, c in pairs)


@needs_install
def test_unknown_solution_set_is_a_usage_error(capsys):
    with pytest.raises(SolutionSetError, match="installed sets: kernelbench-v0, kernelzoo"):
        resolve_solutions("no-such-set")
    assert main(["--suite", "builtin", "--solutions", "no-such-set"]) == 2
    assert "does not exist" in capsys.readouterr().err


def _rec(task, speedup, ms, flags=(), status="ok", custom=True):
    return {"task": task, "status": status, "speedup": speedup, "speedup_ci": [speedup * 0.99, speedup * 1.01],
            "ref_ms": ms * speedup, "cand_ms": ms, "flags": list(flags), "uses_custom_kernel": custom, "reason": ""}


def test_report_summarises_against_targets():
    b = _bench()
    data = {
        "tasks": ["relu", "softmax", "add_layernorm", "mlp"],
        "levels": {"relu": 1, "softmax": 1, "add_layernorm": 2, "mlp": 3},
        "device": {"gpu_name": "Test GPU"},
        "figures": {"copy_bytes_per_s": 3.0e12, "fp32_flop_per_s": 50e12},
        "harness": {
            "eager": [_rec("relu", 1.0, 1.5), _rec("softmax", 4.0, 1.0), _rec("add_layernorm", 2.0, 1.0),
                      _rec("mlp", 0.9, 2.0, flags=["timing_unstable"])],
            "compile": [_rec("relu", 1.0, 1.5), _rec("softmax", 1.0, 1.0), _rec("add_layernorm", 1.0, 1.0),
                        _rec("mlp", 1.0, 2.0, status="incorrect")],
        },
        "profile": {
            "relu": {"ideal_bytes": 4.0e9, "flops": 0, "memory_bound": True, "ref_peak_bytes": 2**30,
                     "cand_peak_bytes": 2**30},
            "softmax": {"ideal_bytes": 1.2e9, "flops": 0, "memory_bound": True, "ref_peak_bytes": 2**30,
                        "cand_peak_bytes": 2**31},
        },
        "portability": {"relu": {"sm80": {"ok": True, "ms": 1.6}, "sm86": {"ok": False, "ms": None, "reason": "boom"},
                                 "sm89": {"ok": True, "ms": 1.6}, "sm90": {"ok": True, "ms": 1.5}}},
    }
    md = b.render_markdown(data)
    assert "| geomean speedup over eager, levels 1-2 | 2.00x |" in md  # (1 * 4 * 2) ** (1/3)
    assert "| geomean speedup over torch.compile, levels 1-2 | 1.00x |" in md
    assert "| status ok against every baseline | 3/4 |" in md
    assert "| solutions slower than eager (speedup < 1.00) | 1 mlp |" in md
    # relu: 4e9 B in 1.5 ms = 2.67 TB/s = 89% of copy; softmax 1.2e9 B in 1 ms = 40%
    assert "| memory-bound solutions at >= 80% of copy bandwidth | 1/2 |" in md
    assert "BW 89%" in md and "BW 40%" in md
    assert "| solutions with more peak memory than eager | 1 softmax |" in md
    assert "| flags other than uses_custom_kernel (eager run) | 1 mlp |" in md
    assert "- relu sm86: boom" in md


def test_geomean_ignores_missing():
    b = _bench()
    assert b.geomean([2.0, None, 8.0]) == pytest.approx(4.0)
    assert b.geomean([None]) is None


def test_bench_needs_a_gpu(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this checks the CPU-only message")
    assert _bench().main(["--out", str(tmp_path)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_the_one_timer_refuses_to_time_without_cuda(monkeypatch):
    from cudal1.kernelzoo import autotune, bench_timer

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for timer in (bench_timer.time_ms, autotune.time_ms):
        with pytest.raises(RuntimeError, match="no CUDA device"):
            timer(lambda: None)
