"""The evaluation report (cudal1.harness.report, report_html, roofline): figures per set, baseline and level,
failures and flags, the technique table, roofline fractions, and pages that hold what they claim.

The page is also read by a real browser: headless Chromium (Debian's ``chromium`` package; .ci/run installs
it) loads it from a file, and every plot must decode and show on the screen. Those tests are skipped where
no Chromium is installed, except with ``CUDAL1_REQUIRE_BROWSER=1`` (set by .ci/run), where a missing browser
fails them instead.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudal1.harness import EvalResult, Task
from cudal1.harness.report import Entry, ReportError, build_report, render_markdown
from cudal1.harness.roofline import DevicePeaks, TaskWork, measure_device_peaks, roofline_ms, task_work

TRITON_SRC = "import triton\n@triton.jit\ndef k(x_ptr):\n    pass\nclass ModelNew:\n    pass\n"
CUDA_SRC = 'src = "__global__ void k() { __shared__ float s[8]; }"\nclass ModelNew:\n    pass\n'
PLAIN_SRC = "class ModelNew:\n    def forward(self, x):\n        return x.clamp_min(0)\n"
REF_SRC = "class Model:\n    def forward(self, x):\n        return torch.relu(x)\n"


def ok(task: str, speedup: float, ref_ms: float = 2.0, flags: tuple[str, ...] = ()) -> EvalResult:
    return EvalResult(task, "ok", speedup=speedup, ref_ms=ref_ms, cand_ms=ref_ms / speedup, flags=flags)


def failed(task: str, status: str = "incorrect") -> EvalResult:
    return EvalResult(task, status, reason="output differs")


def sample_entries() -> list[Entry]:
    """Set A: level 1 t1 2.0x (triton), t2 0.5x (cuda), t3 incorrect; level 2 t4 4.0x (triton, timing_unstable).
    Set B: t1 1.0x, t2 1.0x (plain rewrites) only. Baseline compile for A: t1 1.5x, t4 failed (runtime_error)."""
    E = Entry
    return [
        E("A", "eager", "t1", 1, ok("t1", 2.0), TRITON_SRC, REF_SRC),
        E("A", "eager", "t2", 1, ok("t2", 0.5), CUDA_SRC, REF_SRC),
        E("A", "eager", "t3", 1, failed("t3"), TRITON_SRC, REF_SRC),
        E("A", "eager", "t4", 2, ok("t4", 4.0, flags=("timing_unstable",)), TRITON_SRC, REF_SRC),
        E("A", "compile", "t1", 1, ok("t1", 1.5), TRITON_SRC, REF_SRC),
        E("A", "compile", "t4", 2, failed("t4", "runtime_error"), TRITON_SRC, REF_SRC),
        E("B", "eager", "t1", 1, ok("t1", 1.0), PLAIN_SRC, REF_SRC),
        E("B", "eager", "t2", 1, ok("t2", 1.0), PLAIN_SRC, REF_SRC),
    ]


def test_summary_per_set_baseline_and_level():
    rep = build_report(sample_entries())
    assert rep["sets"] == ["A", "B"] and rep["baselines"] == ["eager", "compile"]
    a = rep["summary"]["A"]["eager"]
    assert a["all"]["tasks"] == 4 and a["all"]["ok"] == 3
    assert a["all"]["success_rate"] == pytest.approx(0.75)
    assert a["all"]["median"] == pytest.approx(2.0) and a["all"]["max"] == pytest.approx(4.0)
    assert a["all"]["mean"] == pytest.approx((2.0 + 0.5 + 4.0) / 3)
    assert a["all"]["geomean"] == pytest.approx(math.exp((math.log(2) + math.log(0.5) + math.log(4)) / 3))
    assert a["all"]["p25"] == pytest.approx(1.25) and a["all"]["p75"] == pytest.approx(3.0)
    # fast_p over all counted tasks (4): correct and faster than p
    assert a["all"]["fast_1"] == pytest.approx(0.5) and a["all"]["fast_2"] == pytest.approx(0.25)
    assert a["1"]["tasks"] == 3 and a["1"]["ok"] == 2 and a["2"]["median"] == pytest.approx(4.0)
    assert a["all"]["statuses"]["incorrect"] == 1 and a["all"]["flags"] == {"timing_unstable": 1}
    assert rep["summary"]["A"]["compile"]["all"]["statuses"]["runtime_error"] == 1
    assert "compile" not in rep["summary"]["B"]
    # no NaN anywhere: the report is strict JSON
    json.dumps(rep, allow_nan=False)
    assert rep["summary"]["B"]["eager"]["all"]["fast_1.5"] == 0.0


def test_technique_table_counts_tags_with_their_speedups():
    rep = build_report(sample_entries())
    a = {t["tag"]: t for t in rep["techniques"]["A"]}
    assert a["triton"]["solutions"] == 3 and a["triton"]["ok"] == 2  # t1, t4 ok; t3 incorrect
    assert a["triton"]["median"] == pytest.approx(3.0) and a["triton"]["max"] == pytest.approx(4.0)
    assert a["custom_cuda"]["solutions"] == 1 and a["shared_memory"]["median"] == pytest.approx(0.5)
    assert a["operator_fusion"]["solutions"] == 0 if "operator_fusion" in a else True  # the reference is one op
    b = {t["tag"]: t for t in rep["techniques"]["B"]}
    assert set(b) == {"algebraic_rewrite"} and b["algebraic_rewrite"]["share"] == pytest.approx(1.0)


def test_library_source_lends_kernel_tags():
    e = Entry("Z", "eager", "t1", 1, ok("t1", 1.2), "from somelib import op\nclass ModelNew:\n    pass\n",
              REF_SRC, library="@triton.jit\ndef k():\n    pass\nx.half()\n")
    tags = {t["tag"] for t in build_report([e])["techniques"]["Z"]}
    assert "triton" in tags and "reduced_precision" not in tags


def test_bad_input_is_refused():
    with pytest.raises(ReportError, match="nothing to report"):
        build_report([])
    e = sample_entries()[0]
    with pytest.raises(ReportError, match="two results"):
        build_report([e, e])
    with pytest.raises(ReportError, match="set_order"):
        build_report([e], set_order=["other"])


def test_roofline_fractions():
    peaks = DevicePeaks("cuda", "GPU", copy_bytes_per_s=1e12, fp32_flop_per_s=1e13)
    works = {"t1": TaskWork("t1", flops=0, ideal_bytes=10**9),  # memory-bound: 1 ms at the roof
             "t2": TaskWork("t2", flops=10**11, ideal_bytes=10**6),  # compute-bound: 10 ms
             "t3": TaskWork("t3", None, None, error="NotImplementedError")}
    assert roofline_ms(works["t1"], peaks) == pytest.approx(1.0)
    assert roofline_ms(works["t2"], peaks) == pytest.approx(10.0)
    assert roofline_ms(works["t3"], peaks) is None
    rep = build_report(sample_entries(), works=works, peaks=peaks)
    rows = {r["task"]: r for r in rep["tasks"]}
    r1 = rows["t1"]["results"]["A|eager"]  # ref 2 ms, candidate 1 ms
    assert r1["ref_roofline"] == pytest.approx(0.5) and r1["cand_roofline"] == pytest.approx(1.0)
    assert rows["t3"]["results"]["A|eager"]["cand_roofline"] is None
    md = render_markdown(rep)
    assert "roofline (reference)" in md and "| t1 | 1 | 2.00x |" in md


def test_markdown_has_every_table_and_both_sets_side_by_side():
    md = render_markdown(build_report(sample_entries(), title="T"))
    assert md.startswith("# T")
    for heading in ("## Speedup over eager", "## Speedup over compile", "## Failures and flags",
                    "## Techniques of A", "## Techniques of B", "## Per task"):
        assert heading in md
    assert "| A / eager | B / eager | A / compile |" in md
    assert "| A | level 1 | 3 | 2 | 67% |" in md
    assert "incorrect 1" in md and "timing_unstable 1" in md
    assert "| t4 | 2 | 4.00x (timing_unstable) |" in md


# ------------------------------------------------------------------------------------------ roofline
def test_task_work_counts_flops_and_bytes_on_meta():
    src = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.fc = nn.Linear(4096, 2048)\n"
           "    def forward(self, x):\n        return torch.relu(self.fc(x))\n"
           "def get_inputs():\n    return [torch.randn(8192, 4096)]\ndef get_init_inputs():\n    return []\n")
    w = task_work(Task("lin", src))
    assert w.error == "" and w.flops == 2 * 8192 * 4096 * 2048
    assert w.ideal_bytes == 4 * (8192 * 4096 + 4096 * 2048 + 2048 + 8192 * 2048)
    assert w.intensity == pytest.approx(w.flops / w.ideal_bytes)


def test_task_work_reports_a_task_it_cannot_trace():
    src = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
           "        return x[x > 0].sum()\ndef get_inputs():\n    return [torch.randn(16)]\n"
           "def get_init_inputs():\n    return []\n")
    w = task_work(Task("masked", src))
    assert w.flops is None and w.ideal_bytes is None and "NotImplementedError" in w.error
    assert task_work(Task("broken", "def (:\n")).error.startswith("SyntaxError")


def test_measure_device_peaks_on_cpu():
    p = measure_device_peaks("cpu")
    assert p.device == "cpu" and p.copy_bytes_per_s > 1e8 and p.fp32_flop_per_s > 1e8
    assert p.ridge == pytest.approx(p.fp32_flop_per_s / p.copy_bytes_per_s)
    assert DevicePeaks.from_dict(p.to_dict()) == p
    with pytest.raises(RuntimeError, match="failed"):
        measure_device_peaks("nodevice")


# ---------------------------------------------------------------------------------------------- html
def _pngs(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def _coloured_pixels(png: bytes) -> int:
    import numpy as np
    from PIL import Image

    px = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int(((px.max(axis=2) - px.min(axis=2)) > 60).sum())


def test_html_is_self_contained_with_every_plot():
    from cudal1.harness.report_html import render_html

    peaks = DevicePeaks("cuda", "GPU", 1e12, 1e13)
    works = {t: TaskWork(t, flops=10**9 * i, ideal_bytes=10**8) for i, t in enumerate(["t1", "t2", "t3", "t4"])}
    page = render_html(build_report(sample_entries(), works=works, peaks=peaks))
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert not re.search(r'(src|href)="(https?:|//|file:)', page)  # nothing loaded from elsewhere
    pngs = _pngs(page)
    assert page.count('<img class="plot"') == len(pngs) == 1 + 1 + 2  # distribution, roofline, 2 baselines
    for png in pngs:
        assert png.startswith(b"\x89PNG") and _coloured_pixels(png) > 200  # drawn, not blank
    assert "Per task" in page and "Techniques of A" in page


def test_html_without_peaks_says_why_there_is_no_roofline():
    from cudal1.harness.report_html import render_html

    page = render_html(build_report(sample_entries()))
    assert "No roofline plot" in page and page.count('<img class="plot"') == 1 + 2


# ---------------------------------------------------------------------------------- headless browser
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CUDAL1_REQUIRE_BROWSER") == "1":
        pytest.fail("no Chromium found but CUDAL1_REQUIRE_BROWSER=1: install Debian's chromium package")
    pytest.skip("no Chromium installed (apt-get install chromium)")


def _run(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _page(tmp: Path) -> Path:
    works = {t: TaskWork(t, flops=10**9 * i, ideal_bytes=10**8) for i, t in enumerate(["t1", "t2", "t3", "t4"])}
    report = build_report(sample_entries(), works=works, peaks=DevicePeaks("cuda", "GPU", 1e12, 1e13))
    page = tmp / "report.html"
    from cudal1.harness.report_html import render_html

    page.write_text(render_html(report))
    return page


def _rendered(browser: str, tmp: Path, page: Path) -> tuple[int, int]:
    out = _run(browser, tmp, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    body = re.search(r"<body[^>]*>", out.stdout)
    assert body, f"no DOM from the browser: {out.stderr[-500:]}"
    plots = re.search(r'data-plots="(\d+)"', body.group(0))
    shown = re.search(r'data-plots-rendered="(\d+)"', body.group(0))
    assert plots and shown, f"the page's load script did not run: {body.group(0)}"
    return int(plots.group(1)), int(shown.group(1))


def test_every_plot_renders_in_headless_chromium(tmp_path):
    browser = _browser()
    page = _page(tmp_path)
    assert _rendered(browser, tmp_path, page) == (4, 4)

    shot = tmp_path / "shot.png"
    out = _run(browser, tmp_path, "--window-size=1200,2200", f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), out.stderr[-500:]
    import numpy as np
    from PIL import Image

    px = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    coloured = int(((px.max(axis=2) - px.min(axis=2)) > 60).sum())
    assert coloured > 5000, "the screenshot shows (almost) no plot colour"


def test_a_broken_plot_is_caught(tmp_path):
    """The check can fail: a page whose images do not decode reports them as not rendered."""
    browser = _browser()
    page = _page(tmp_path)
    text = page.read_text()
    broken = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+",
                    "data:image/png;base64," + base64.b64encode(b"not a png" * 10).decode(), text, count=2)
    page.write_text(broken)
    assert _rendered(browser, tmp_path, page) == (4, 2)
