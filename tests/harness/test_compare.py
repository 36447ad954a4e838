"""Output comparison: structure, NaN/Inf parity and per-dtype tolerances."""

from __future__ import annotations

import pytest
import torch

from cudal1.harness.compare import compare_outputs, compare_tensor, tolerance_for


def rnd(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def test_fp32_tolerance_is_about_1e4_relative():
    ref = rnd(1000)
    assert compare_tensor(ref * (1 + 5e-6), ref).ok
    bad = compare_tensor(ref * (1 + 1e-3), ref)
    assert not bad.ok and "outside tolerance" in bad.reason
    assert tolerance_for(torch.float32)[0] == 1e-4


def test_half_precision_result_fails_an_fp32_task():
    ref = rnd(256, 256) @ rnd(256, 256, seed=1)
    half = (rnd(256, 256).half() @ rnd(256, 256, seed=1).half()).float()
    assert not compare_tensor(half, ref).ok


@pytest.mark.parametrize("dtype, eps", [(torch.float16, 2e-3), (torch.bfloat16, 1e-2), (torch.float64, 1e-9)])
def test_lower_precision_dtypes_have_their_own_tolerance(dtype, eps):
    ref = rnd(500, dtype=dtype)
    assert compare_tensor((ref.double() * (1 + eps)).to(dtype), ref).ok


def test_structure_checks():
    ref = rnd(4, 5)
    assert "shape" in compare_tensor(ref[:, :4], ref).reason
    assert "dtype" in compare_tensor(ref.double(), ref).reason
    assert "exact torch.Tensor" in compare_tensor(ref.numpy(), ref).reason

    class Sub(torch.Tensor):
        pass

    assert "exact torch.Tensor" in compare_tensor(ref.as_subclass(Sub), ref).reason


def test_nan_and_inf_parity():
    ref = rnd(10)
    c = ref.clone()
    c[3] = float("nan")
    assert "NaN" in compare_tensor(c, ref).reason
    r2 = ref.clone()
    r2[3] = float("nan")
    assert compare_tensor(r2.clone(), r2).ok
    c = ref.clone()
    c[2] = float("inf")
    assert "Inf" in compare_tensor(c, ref).reason
    r3 = ref.clone()
    r3[2] = float("inf")
    c3 = r3.clone()
    c3[2] = float("-inf")
    assert not compare_tensor(c3, r3).ok


def test_integer_outputs_are_exact():
    ref = torch.arange(10)
    assert compare_tensor(ref.clone(), ref).ok
    c = ref.clone()
    c[0] = 1
    assert not compare_tensor(c, ref).ok


def test_tuple_outputs_and_errors_reported():
    a, b = rnd(3), rnd(4, seed=2)
    good = compare_outputs((a.clone(), b * (1 + 1e-6)), (a, b))
    assert good.ok and good.max_abs_err > 0
    assert "output has 1 tensors, expected 2" in compare_outputs(a, (a, b)).reason
    assert "output[1]" in compare_outputs((a, b * 2), (a, b)).reason


def test_values_near_zero_after_cancellation_use_output_scale():
    ref = rnd(1000) * 100
    ref[0] = 1e-6  # a value that came out of cancellation
    cand = ref.clone()
    cand[0] = 1e-6 + 1e-4  # tiny absolute error relative to the output's scale
    assert compare_tensor(cand, ref).ok
