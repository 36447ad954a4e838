"""triangular_matmul: torch.triu/tril(a @ b) computed block by block, exact for any inputs (nothing assumed about
them), on sizes that halve cleanly, sizes that do not, and sizes below a leaf; no gradient, said plainly."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo.registry import NoGradientError
from cudal1.kernelzoo.triangular import triangular_matmul


@pytest.mark.parametrize("n", [1, 5, 16, 37, 64, 96, 256])
@pytest.mark.parametrize("upper", [True, False])
def test_matches_the_masked_product(n, upper):
    g = torch.Generator().manual_seed(n)
    a, b = torch.randn(n, n, dtype=torch.float64, generator=g), torch.randn(n, n, dtype=torch.float64, generator=g)
    want = torch.triu(a @ b) if upper else torch.tril(a @ b)
    got = triangular_matmul(a, b, upper)
    assert got.is_contiguous() and got.dtype == a.dtype
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_inputs_are_not_assumed_triangular():
    """Adversarial twin: a computation that read only one triangle of A or B would miss these entries."""
    a, b = torch.zeros(64, 64, dtype=torch.float64), torch.zeros(64, 64, dtype=torch.float64)
    a[0, 63], b[63, 0] = 2.0, 3.0  # A strictly upper, B strictly lower: (A @ B)[0, 0] = 6
    assert triangular_matmul(a, b, True)[0, 0] == 6.0 and triangular_matmul(a, b, False)[0, 0] == 6.0


def test_bad_shapes_and_gradients_are_errors():
    with pytest.raises(ValueError, match="square"):
        triangular_matmul(torch.zeros(3, 4), torch.zeros(4, 3), True)
    x = torch.zeros(4, 4, requires_grad=True)
    with pytest.raises(NoGradientError, match="no gradient"):
        triangular_matmul(x, x, True)
    with torch.no_grad():
        assert triangular_matmul(x, x, True).shape == (4, 4)
