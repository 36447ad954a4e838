"""benchmarks/README.md indexes every committed result page, and the index is current (issue 44)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_result_page_is_in_the_index_and_the_index_is_current(load_script):
    idx = load_script("benchmarks/scripts/results_index.py")
    text = (ROOT / "benchmarks/README.md").read_text(encoding="utf-8")
    for page in (ROOT / "benchmarks/results").glob("*.md"):
        assert f"](results/{page.name})" in text, f"{page.name} is not in benchmarks/README.md's index"
    assert idx.current(text) == text, "run: uv run python benchmarks/scripts/results_index.py"


def test_hardware_is_read_from_the_page_name(load_script):
    idx = load_script("benchmarks/scripts/results_index.py")
    assert idx.hardware("2026-11-22-policy-grpo-h200x2") == "2x H200"
    assert idx.hardware("2026-12-04-harness-timing-h200") == "H200"
    assert idx.hardware("2026-11-25-zoo-vs-liger-h100") == "H100"
    assert idx.hardware("2026-12-04-committed-batches-cpu") == "2-core CPU"
    assert idx.hardware("2026-11-24-trust-boundary-before-after") == "see the page"


def test_a_script_no_result_names_is_used_by_something_or_deleted(load_script):
    idx = load_script("benchmarks/scripts/results_index.py")
    named = {s for r in idx.rows() for s in r["scripts"]}
    unused = [s for s in idx.unnamed_scripts(named) if not idx.users_of(s)]
    assert not unused, f"no result page names {unused} and nothing uses them: delete them (git keeps them)"
