"""The one-launch kernels of the launch-bound KernelBench level 1 solutions (``kernelbench_v0``: 94, 96, 38, 39,
93, 91, 25; ``kernelbench_v0/pending``: 95) against PyTorch, through each file's kernel path (the function its ``ModelNew``
calls on a CUDA input): in Triton's interpreter on CPU (small sizes), on the GPU when there is one.

``test_kernelbench_solutions.py`` checks the files' ``ModelNew`` against the tasks, but on CPU a ``ModelNew``
runs its PyTorch fallback; these tests run the kernels themselves. The reductions are also run with fewer
programs than blocks (each program loops over several) and called repeatedly, so the arrival counter must be
back at zero after each call: a kernel that did not reset it would find no last program the next time (and
write nothing).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
import torch
import triton

from cudal1.harness.compare import compare_outputs
from cudal1.kernelzoo.solutions import KERNELBENCH_V0

from .helpers import rnd as random_normal

SET = Path(KERNELBENCH_V0)
INTERPRET = bool(getattr(getattr(triton, "knobs", None), "runtime", None) and triton.knobs.runtime.interpret)
NO_INTERPRETER = pytest.mark.skipif(not INTERPRET, reason="CPU launches need TRITON_INTERPRET=1")
NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = [pytest.param("cpu", marks=NO_INTERPRETER), pytest.param("cuda", marks=[pytest.mark.gpu, NO_GPU])]


def load(task: str) -> ModuleType:
    """The solution file of ``task`` (in the set, else in ``pending/``: a file moves up when a GPU run verifies
    it) as a module (file names start with a digit: loaded by path). A file in neither place fails the test."""
    path = next((p for p in (SET / f"{task}.py", SET / "pending" / f"{task}.py") if p.is_file()), None)
    assert path is not None, f"no solution file for {task} in {SET} or its pending/ folder"
    spec = importlib.util.spec_from_file_location(f"_solution_{task}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """The harness's comparison (fp32: |got - want| <= 1e-4 * rms(want) + 1e-4 * |want|), with the worst
    elements printed on failure."""
    cmp = compare_outputs(got.cpu(), want.cpu())
    if not cmp.ok:
        err = (got.cpu() - want.cpu()).abs().flatten()
        worst = err.topk(min(5, err.numel())).indices
        g, w = got.cpu().flatten()[worst].tolist(), want.cpu().flatten()[worst].tolist()
        pytest.fail(f"{what}: {cmp.reason}; worst at {worst.tolist()}: got {g}, want {w}")


def gen(seed: int) -> torch.Generator:
    """A seeded CPU generator (inputs are drawn on CPU, then moved: the same values on every device)."""
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return g


def randn(*shape: int, seed: int, device: str, scale: float = 1.0) -> torch.Tensor:
    return random_normal(shape, seed, scale=scale, device=device)


# -- scalar losses: one launch, last-arriving program sums the partials --------------------------------------
LOSSES: dict[str, tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]] = {
    "94_MSELoss": ("mse_mean", lambda p, t: torch.mean((p - t) ** 2)),
    "96_HuberLoss": ("huber_mean", lambda p, t: torch.nn.functional.smooth_l1_loss(p, t)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", sorted(LOSSES))
@pytest.mark.parametrize("shape,max_parts", [((5, 37), 1024), ((3, 5000), 1024), ((3, 5000), 2), ((1,), 1024),
                                             ((7, 4096), 3)])
def test_elementwise_losses(task, shape, max_parts, device):
    mod = load(task)
    fn_name, ref = LOSSES[task]
    fn = getattr(mod, fn_name)
    for seed in (1, 2, 3):
        p = randn(*shape, seed=seed, device=device, scale=2.0)  # |p - t| on both sides of Huber's beta
        t = randn(*shape, seed=seed + 100, device=device)
        got = fn(p, t, max_parts=max_parts)
        assert got.shape == () and got.dtype == torch.float32
        check(got, ref(p, t), f"{task} {shape} max_parts={max_parts} seed {seed}")
    assert int(mod._SCRATCH.get(p)[1]) == 0, "the arrival counter was not reset"


def test_huber_keeps_nan():
    mod = load("96_HuberLoss")
    if not INTERPRET and not torch.cuda.is_available():
        pytest.skip("no interpreter and no GPU")
    device = "cpu" if INTERPRET else "cuda"
    p = randn(4, 33, seed=5, device=device)
    p[2, 7] = float("nan")
    assert torch.isnan(mod.huber_mean(p, torch.zeros_like(p)))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # interpreter's 0 / 0
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows,classes,max_parts", [(37, 7, 1024), (300, 10, 1024), (300, 10, 1),
                                                    (5, 100, 1024), (9, 1000, 2)])
def test_cross_entropy(rows, classes, max_parts, device):
    mod = load("95_CrossEntropyLoss")
    for seed in (1, 2):
        x = randn(rows, classes, seed=seed, device=device, scale=3.0)
        t = torch.randint(0, classes, (rows,), generator=gen(seed)).to(device)
        t[1] = -100  # ignore_index: left out of the sum and of the count
        got = mod.cross_entropy_mean(x, t, max_parts=max_parts)
        check(got, torch.nn.functional.cross_entropy(x, t), f"95 ({rows}, {classes}) seed {seed}")
    t[:] = -100
    assert torch.isnan(mod.cross_entropy_mean(x, t)) and torch.isnan(torch.nn.functional.cross_entropy(x, t))
    assert int(mod._SCRATCH.get(x)[1]) == 0, "the arrival counter was not reset"


# -- row kernels ---------------------------------------------------------------------------------------------
ROWS: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "38_L1Norm_": ("l1_normalize_rows", lambda x: x / torch.sum(torch.abs(x), dim=1, keepdim=True)),
    "39_L2Norm_": ("l2_normalize_rows", lambda x: x / torch.norm(x, p=2, dim=1, keepdim=True)),
    "91_cumsum_reverse": ("reverse_cumsum_rows", lambda x: torch.cumsum(x.flip(1), dim=1).flip(1)),
    "25_Swish": ("swish", lambda x: x * torch.sigmoid(x)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", sorted(ROWS))
@pytest.mark.parametrize("shape", [(5, 333), (3, 5000), (2, 1), (1, 16384), (2, 17000)])
def test_row_kernels(task, shape, device):
    mod = load(task)
    fn_name, ref = ROWS[task]
    for seed in (1, 2):
        x = randn(*shape, seed=seed, device=device, scale=4.0)
        check(getattr(mod, fn_name)(x), ref(x), f"{task} {shape} seed {seed}")


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # interpreter's inf * 0
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(4, 37), (3, 5000), (2, 1), (2, 4096)])
def test_masked_cumsum(shape, device):
    mod = load("93_masked_cumsum")
    for seed in (1, 2):
        x = randn(*shape, seed=seed, device=device)
        mask = (torch.rand(*shape, generator=gen(seed + 7)) < 0.5).to(device)
        check(mod.masked_cumsum_rows(x, mask), torch.cumsum(x * mask, dim=1), f"93 {shape} seed {seed}")
    x[0, 0] = float("inf")
    mask[0, 0] = False
    assert torch.isnan(mod.masked_cumsum_rows(x, mask)[0, 0])  # inf * False is NaN in eager too
