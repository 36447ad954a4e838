"""Kernel caches of candidate workers (:mod:`cudal1.harness.buildcache`): each candidate source keeps its own
compiled kernels, and every worker is given the harness's own kernels (the digest, compiled by the trusted
reference process) so that a fresh process does not compile them in its first trial; nothing a candidate
wrote reaches another source or the trusted cache, and a file a candidate planted under a harness kernel's name
never replaces the trusted one."""

from __future__ import annotations

import os
from pathlib import Path

from cudal1.harness import buildcache as B


def _entry(root: Path, name: str, files: dict[str, bytes]) -> Path:
    d = root / name
    d.mkdir(parents=True)
    for f, data in files.items():
        (d / f).write_bytes(data)
    return d


def _trusted(tmp_path: Path) -> Path:
    """A reference cache root: the digest kernel, a launcher, and an inductor kernel of a reference."""
    trusted = tmp_path / "reference"
    tri = trusted / "triton"
    _entry(tri, "AAA", {"_digest_sums_kernel.cubin": b"digest", "_digest_sums_kernel.json": b"{}"})
    _entry(tri, "BBB", {"__triton_launcher.so": b"launcher"})
    _entry(tri, "CCC", {"triton_poi_fused_relu_0.cubin": b"inductor", "triton_poi_fused_relu_0.json": b"{}"})
    return trusted


def test_a_worker_gets_its_sources_kernels_and_the_harness_kernels_only(tmp_path):
    trusted = _trusted(tmp_path)
    persistent, worker = tmp_path / "kernels" / "src1", tmp_path / "w1" / "cache"
    _entry(persistent / "triton", "DDD", {"_relu_kernel.cubin": b"mine"})
    assert [e.name for e in B.harness_kernel_entries(trusted / "triton")] == ["AAA", "BBB"]
    B.seed_cache(persistent, worker, trusted=trusted)
    got = {str(p.relative_to(worker)) for p in worker.rglob("*") if p.is_file()}
    assert got == {"triton/AAA/_digest_sums_kernel.cubin", "triton/AAA/_digest_sums_kernel.json",
                   "triton/BBB/__triton_launcher.so", "triton/DDD/_relu_kernel.cubin"}


def test_a_planted_harness_kernel_never_replaces_the_trusted_one_and_is_not_kept(tmp_path):
    # adversarial: a candidate's earlier run left a file under the digest kernel's cache entry in its own cache
    trusted = _trusted(tmp_path)
    persistent, worker = tmp_path / "kernels" / "src1", tmp_path / "w1" / "cache"
    _entry(persistent / "triton", "AAA", {"_digest_sums_kernel.cubin": b"planted"})
    B.seed_cache(persistent, worker, trusted=trusted)
    assert (worker / "triton" / "AAA" / "_digest_sums_kernel.cubin").read_bytes() == b"digest"
    # the candidate overwrites its copy and compiles a kernel of its own: only its own kernel is kept, and the
    # trusted cache is untouched
    (worker / "triton" / "AAA" / "_digest_sums_kernel.cubin").write_bytes(b"planted again")
    _entry(worker / "triton", "EEE", {"_mine.cubin": b"new"})
    fresh = tmp_path / "kernels" / "src2"
    B.keep_cache(worker, fresh, trusted=trusted)
    assert {str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file()} == {"triton/EEE/_mine.cubin"}
    assert (trusted / "triton" / "AAA" / "_digest_sums_kernel.cubin").read_bytes() == b"digest"


def test_links_in_the_trusted_cache_are_not_followed(tmp_path):
    trusted = _trusted(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("parent's file")
    os.symlink(secret, trusted / "triton" / "AAA" / "_digest_sums_kernel.extra")
    os.symlink(tmp_path, trusted / "triton" / "ZZZ")
    worker = tmp_path / "w" / "cache"
    B.seed_cache(tmp_path / "none", worker, trusted=trusted)
    assert not (worker / "triton" / "AAA" / "_digest_sums_kernel.extra").exists()
    assert not (worker / "triton" / "ZZZ").exists()


def test_without_a_trusted_cache_a_worker_gets_its_sources_kernels_as_before(tmp_path):
    persistent, worker = tmp_path / "kernels" / "src1", tmp_path / "w1" / "cache"
    _entry(persistent / "triton", "DDD", {"_relu_kernel.cubin": b"mine"})
    B.seed_cache(persistent, worker)
    B.seed_cache(persistent, tmp_path / "w2" / "cache", trusted=tmp_path / "no-such-dir")
    for w in (worker, tmp_path / "w2" / "cache"):
        assert {str(p.relative_to(w)) for p in w.rglob("*") if p.is_file()} == {"triton/DDD/_relu_kernel.cubin"}


def test_seeding_a_cache_a_worker_already_uses_replaces_files_and_never_rewrites_them(tmp_path):
    """A spare that warmed the libraries compiled the digest kernel into its own cache and has its launcher library
    mapped; seeding that cache afterwards with the trusted copies must leave the mapped file's bytes as they are
    (a new file renamed over the old name), or the worker crashes on its next launch (SIGSEGV, an H100 GPU test
    of ``warm_spares="libraries"``, 2026-12-06). A link planted at a target name is replaced, not written through."""
    trusted = _trusted(tmp_path)
    worker = tmp_path / "w1" / "cache"
    _entry(worker / "triton", "BBB", {"__triton_launcher.so": b"compiled here"})
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the cache's")
    os.symlink(outside, worker / "triton" / "BBB" / "extra.json")
    (trusted / "triton" / "BBB" / "extra.json").write_bytes(b"{}")
    with open(worker / "triton" / "BBB" / "__triton_launcher.so", "rb") as mapped:  # the process's open file
        B.seed_cache(tmp_path / "none", worker, trusted=trusted)
        assert mapped.read() == b"compiled here"  # the old file's bytes untouched
    assert (worker / "triton" / "BBB" / "__triton_launcher.so").read_bytes() == b"launcher"
    assert outside.read_bytes() == b"not the cache's"
    link = worker / "triton" / "BBB" / "extra.json"
    assert not link.is_symlink() and link.read_bytes() == b"{}"
    assert not [p for p in worker.rglob("*.part")]
