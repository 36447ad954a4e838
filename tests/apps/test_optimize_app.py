"""apps/optimize.py as a user runs it: argument errors (exit 2, one line), a user's own module searched end to
end with a scripted OpenAI-protocol server as the policy, a refused folder, and the embedded default on CPU."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

from cudal1.harness.flags import improves

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--device", "cpu", "--trials", "2", "--time-budget", "0.05", "--timeout", "120"]
RELU = ["--suite", "builtin", "--tasks", "relu", "--size", "BATCH=8", "--size", "DIM=64"]

NET = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, scale: float = 2.0):
            super().__init__()
            self.scale = scale

        def forward(self, x):
            for _ in range(4):  # recomputes the same value: a rewrite computing it once really improves
                y = torch.tanh(x) * self.scale
            return y


    def example_inputs():
        return [torch.randn(256, 512)]  # calls the parent's clock resolves on two cores (see the test below)
    ''')
NET_NEW = ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def __init__(self, scale: float = 2.0):\n"
           "        super().__init__()\n        self.scale = scale\n\n    def forward(self, x):\n"
           "        return x.tanh().mul(self.scale)")


def app():
    spec = importlib.util.spec_from_file_location("app_optimize", ROOT / "apps" / "optimize.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["app_optimize"] = mod
    spec.loader.exec_module(mod)
    return mod


def respond(code: str) -> str:
    return (f"## Performance Analysis\nTwo ops.\n\n## Algorithm Design\nIn place.\n\n## Code Implementation\n"
            f"```python\n{code}\n```\n")


@pytest.mark.parametrize("argv, words", [
    ([], "no tasks: give --suite"),
    (["--tasks", "relu"], "give --suite too"),
    (["--suite", "nonsense"], "unknown suite spec"),
    (["--suite", "builtin", "--tasks", "relu,nope"], "has no task nope"),
    (["--task", "/no/such/task.py"], "cannot read file"),
    (["--module", "net.py"], "use FILE.py:CLASS"),
    ([*RELU, "-k", "0"], "-k 1"),
    ([*RELU, "--rounds", "0"], "rounds must be an integer >= 1"),
    ([*RELU, "--rounds", "two"], "invalid int value"),
    ([*RELU, "--backend", "gpt4"], "backend spec 'gpt4'"),
    (["--suite", "builtin", "--tasks", "relu", "--size", "BATCH"], "use NAME=VALUE"),
    (["--suite", "builtin", "--tasks", "relu", "--size", "NOPE=3"], "no task defines a module-level NOPE"),
    (["--suite", "builtin", "--tasks", "relu", "--size", "softmax:DIM=3"], "no task softmax"),
    ([*RELU, "--device", "tpu"], "invalid choice: 'tpu'"),
    ([*RELU, "--timeout", "0"], "--timeout must be a positive"),
    ([*RELU, "--device", "cpu", "--baseline", "cudagraph"], "needs a CUDA device"),
    ([*RELU, "--device", "cpu", "--backend", "openai:http://127.0.0.1:9/v1#m", "--prompt-tokens", "50"],
     "task relu: the task alone needs"),
    ([*RELU, "--menu", "softmax,flash_attention"], "has no op ['flash_attention']"),
    ([*RELU, "--device", "cpu", "--backend", "openai:http://127.0.0.1:9/v1#m", "--menu", "--prompt-tokens", "600"],
     "or fewer menu ops"),
])
def test_argument_errors_exit_2_with_one_line(argv, words, capsys, tmp_path):
    assert app().main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("optimize: error: ") and words in err and err.count("\n") == 1


def test_module_end_to_end_and_a_refused_folder(tmp_path, capsys, openai_server):
    """The rewrite must read as a real improvement. At 4 x 16 its calls took 9 us and the noise of the parent's clock
    4-10 us, so it read ``timing_unresolved`` (not an improvement) now and then: CI's full suite of 2026-12-05, and
    one local run in six. At 256 x 512 a call takes about 0.15 ms against a noise of 0.02-0.04 ms (4 local runs)."""
    (tmp_path / "my_net.py").write_text(NET)
    openai_server.reply = lambda body, i: [respond(NET_NEW), "prose only"][i]
    out = tmp_path / "out"
    argv = ["--module", f"{tmp_path / 'my_net.py'}:Net", "--inputs", "example_inputs", "--backend",
            f"openai:{openai_server.base_url}#scripted", "--rounds", "1", "-k", "2", "--out", str(out), *FAST]
    assert app().main(argv) == 0
    printed = capsys.readouterr().out
    assert (out / "best" / "my_net_Net.py").read_text() == NET_NEW
    best = json.loads((out / "best.json").read_text())["my_net_Net"]
    # a real improvement as the harness defines one: measurement flags (timing_unstable on a loaded 2-core
    # machine, seen in a clean-clone run) are allowed, reject/suspect/task flags are not
    assert best["round"] == 1 and improves("ok", best["flags"], tuple(best["speedup_ci"]))
    prompt = openai_server.requests[0]["body"]["messages"][0]["content"]
    assert "class Model(nn.Module)" in prompt and "get_inputs = example_inputs" in prompt
    assert "round 1/1  my_net_Net" in printed and str(out / "best" / "my_net_Net.py") in printed
    assert [h["status"] for h in map(json.loads, (out / "history.jsonl").read_text().splitlines())] == ["ok", "no_code"]
    assert json.loads((out / "state.json").read_text())["rounds_done"] == 1

    # the same folder with another baseline is refused before anything runs; --force goes on
    assert app().main([*argv, "--baseline", "compile"]) == 2
    err = capsys.readouterr().err
    assert "baseline (eager there, compile now)" in err and "--force" in err and len(openai_server.requests) == 1
    assert app().main([*argv, "--baseline", "compile", "--force"]) == 0
    printed = capsys.readouterr().out
    assert "all 1 rounds are done" in printed and len(openai_server.requests) == 1
    # best/ describes the current search: nothing is measured against torch.compile yet
    assert "my_net_Net.py removed" in printed and not (out / "best" / "my_net_Net.py").exists()
    assert json.loads((out / "best.json").read_text())["my_net_Net"] is None
    assert json.loads((out / "state.json").read_text())["identity"]["baseline"] == "compile"


@pytest.mark.slow
def test_embedded_default_on_cpu(tmp_path, capsys, monkeypatch):
    """The embedded SmolLM2 policy, 1 round, k=1, on a small built-in task: it runs and writes the outputs (a
    135M model rarely writes a complete ModelNew in 48 tokens; whatever it writes is recorded)."""
    monkeypatch.setenv("CUDAL1_CACHE_DIR", str(tmp_path / "cache"))  # the GGUF conversion goes here, not ~/.cache
    out = tmp_path / "out"
    assert app().main([*RELU, "--rounds", "1", "-k", "1", "--max-new-tokens", "48", "--out", str(out), *FAST]) == 0
    printed = capsys.readouterr().out
    assert "backend embedded" in printed and "round 1/1  relu" in printed
    for name in ("results.sqlite", "best.json", "history.jsonl", "state.json"):
        assert (out / name).is_file(), name
    (line,) = (out / "history.jsonl").read_text().splitlines()
    assert json.loads(line)["round"] == 1 and json.loads((out / "state.json").read_text())["rounds_done"] == 1
    assert json.loads((out / "state.json").read_text())["identity"]["backend"] == "embedded"
