"""Fixtures shared by several test folders: a local HTTP server speaking the OpenAI chat-completions protocol.
And one rule for the KernelBench tests: with ``CUDAL1_REQUIRE_KERNELBENCH=1`` (set by .ci/run wherever
``../shared/kernelbench-v0`` exists) a test skipped because KernelBench's task files were not found fails instead,
so a wrong path cannot skip the set's checks silently."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

#: the reason every KernelBench test module gives when it skips for want of the task files
KERNELBENCH_MISSING = "KernelBench task files not found"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and os.environ.get("CUDAL1_REQUIRE_KERNELBENCH") == "1"
            and isinstance(report.longrepr, tuple) and KERNELBENCH_MISSING in str(report.longrepr[2])):
        report.outcome = "failed"
        report.longrepr = (f"{report.longrepr[2]}, but CUDAL1_REQUIRE_KERNELBENCH=1 (.ci/run found KernelBench beside "
                           "the checkout): the KernelBench tests must run, not skip")


class FakeOpenAI:
    """Records every request; answers with deterministic choices; scripted failures are served first.

    By default choice ``i`` of a request is ``"<last user message>|seed=<seed>|<i>"``; set ``reply`` to
    ``reply(body, i) -> str`` to script the completions instead (e.g. code for a search to evaluate)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failures: list[tuple[int, dict, dict]] = []  # (status, body, headers), served in order
        self.max_choices: int | None = None
        self.reply: Callable[[dict, int], str] | None = None
        self.base_url = ""
        self.lock = threading.Lock()

    def answer(self, body: dict) -> dict:
        n = body.get("n", 1) if self.max_choices is None else min(body.get("n", 1), self.max_choices)
        user = body["messages"][-1]["content"]

        def content(i: int) -> str:
            return self.reply(body, i) if self.reply is not None else f"{user}|seed={body.get('seed')}|{i}"

        return {"id": "cmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": i, "finish_reason": "stop", "message": {"role": "assistant", "content": content(i)}}
                            for i in reversed(range(n))]}  # out of order on purpose: the client sorts by index


@pytest.fixture
def openai_server():
    """A :class:`FakeOpenAI` served on 127.0.0.1 (``.base_url`` ends in ``/v1``), shut down after the test."""
    fake = FakeOpenAI()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with fake.lock:
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)})
                failure = fake.failures.pop(0) if fake.failures else None
            if self.path != "/v1/chat/completions":
                status, body, headers = 404, {"error": {"message": f"no route {self.path}"}}, {}
            elif failure is not None:
                status, body, headers = failure
            else:
                status, body, headers = 200, fake.answer(json.loads(raw)), {}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield fake
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def load_script() -> Callable[[str], object]:
    """Imports a script or app that is no package module by its path from the repository root (a fresh module each
    call): ``load_script("benchmarks/scripts/zoo_menu.py").render()``."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]

    def load(path: str) -> object:
        file = root / path
        spec = importlib.util.spec_from_file_location(f"_script_{file.stem}", file)
        assert spec is not None and spec.loader is not None, f"{file} is not a Python file"
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
