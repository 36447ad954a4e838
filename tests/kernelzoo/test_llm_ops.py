"""The LLM training ops' Triton kernels against their references, per dtype (Triton's interpreter on a CPU-only
machine, the GPU where there is one); gradients are in test_gradients.py."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import add_rms_norm
from cudal1.kernelzoo.ops import add_rms_norm as arn

from .helpers import rnd as random_normal

DEV = "cuda" if torch.cuda.is_available() else "cpu"
#: (atol, rtol) per dtype: the kernels compute in fp32 and round once at the store
TOL = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}


def rnd(shape, seed, dtype):
    return random_normal(shape, seed, dtype, scale=2.0)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("shape, block", [((3, 40), 16), ((2, 3, 33), 64), ((1, 1), 16)])
def test_add_rms_norm_kernel(dtype, shape, block):
    x, res, w = rnd(shape, 1, dtype), rnd(shape, 2, dtype), rnd(shape[-1:], 3, dtype)
    y, h = arn.add_rms_norm_launch(x, res, w, 1e-6, {"BLOCK": block, "num_warps": 4})
    y_ref, h_ref = arn.add_rms_norm_ref(x, res, w, 1e-6)
    assert y.dtype == h.dtype == dtype
    # the residual stream is x + residual rounded once (Triton's CPU interpreter rounds bf16 its own way: one ulp)
    ulp = 2.0 ** -7 if dtype == torch.bfloat16 and DEV == "cpu" else 0.0
    torch.testing.assert_close(h, h_ref, rtol=ulp, atol=0)
    atol, rtol = TOL[dtype]
    torch.testing.assert_close(y.float(), y_ref.float(), atol=atol, rtol=rtol)


def test_add_rms_norm_checks_its_inputs():
    x = torch.randn(2, 8)
    with pytest.raises(ValueError, match="residual must match x"):
        add_rms_norm(x, torch.randn(2, 7), torch.ones(8))
    with pytest.raises(ValueError, match="residual must match x"):
        add_rms_norm(x, torch.randn(2, 8, dtype=torch.float64), torch.ones(8))
    with pytest.raises(ValueError, match=r"weight must have shape \(8,\)"):
        add_rms_norm(x, x, torch.ones(4))


def _rope_inputs(dtype, batch_cos):
    q = rnd((2, 3, 8, 4), 4, dtype).transpose(1, 2)  # (B, H, S, D) as a transposed view, as attention makes it
    k = rnd((2, 1, 3, 4), 5, dtype)
    n = 2 if batch_cos else 1
    return q, k, rnd((n, 3, 4), 6, dtype), rnd((n, 3, 4), 7, dtype)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("batch_cos", [True, False])
def test_rope_qk_kernel(dtype, batch_cos):
    from cudal1.kernelzoo.ops import rope_qk as rq

    q, k, cos, sin = _rope_inputs(dtype, batch_cos)
    qo, ko = rq.rope_qk_launch(q, k, cos, sin)
    q_ref, k_ref = rq.rope_qk_ref(q, k, cos, sin)
    atol, rtol = TOL[dtype]
    assert qo.stride() == q.stride() and qo.shape == q.shape and ko.shape == k.shape  # the input's layout kept
    torch.testing.assert_close(qo.float(), q_ref.float(), atol=atol, rtol=rtol)
    torch.testing.assert_close(ko.float(), k_ref.float(), atol=atol, rtol=rtol)


def test_rope_qk_with_position_ids_indexes_the_tables():
    from cudal1.kernelzoo.ops import rope_qk as rq

    q, k, _, _ = _rope_inputs(torch.float32, False)
    table_c, table_s = rnd((10, 4), 8, torch.float32), rnd((10, 4), 9, torch.float32)
    pos = torch.tensor([[7, 2, 9], [0, 0, 5]], device=DEV)
    qo, ko = rq.rope_qk_launch(q, k, table_c, table_s, pos)
    q_ref, k_ref = rq.rope_qk_ref(q, k, table_c[pos], table_s[pos])  # what a rotary module would pass
    torch.testing.assert_close(qo, q_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ko, k_ref, atol=1e-5, rtol=1e-5)


def test_rope_qk_checks_its_inputs():
    from cudal1.kernelzoo import rope_qk

    q, k, cos, sin = _rope_inputs(torch.float32, True)
    with pytest.raises(ValueError, match="must lie in"):
        rope_qk(q, k, cos[0], sin[0], torch.tensor([[0, 1, 3], [0, 1, 2]]))
    with pytest.raises(ValueError, match="whole \\(P, D\\) tables need position_ids"):
        rope_qk(q, k, cos[0], sin[0])
    with pytest.raises(ValueError, match="must be even"):
        rope_qk(q[..., :3], k[..., :3], cos[..., :3], sin[..., :3])


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_geglu_kernel(dtype, approximate):
    from cudal1.kernelzoo.ops import geglu as gg

    g, u = rnd((5, 37), 10, dtype), rnd((5, 37), 11, dtype)
    got = gg.geglu_launch(g, u, approximate, {"BLOCK": 64, "num_warps": 4})
    atol, rtol = TOL[dtype]
    torch.testing.assert_close(got.float(), gg.geglu_ref(g.float(), u.float(), approximate), atol=atol * 4, rtol=rtol)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("beta", [0.0, 0.3, 0.5, 1.0])
def test_jsd_row_kernel(dtype, beta):
    from cudal1.kernelzoo.ops import jsd as j

    lq = torch.log_softmax(rnd((4, 37), 12, torch.float32), -1).to(dtype)
    lp = torch.log_softmax(rnd((4, 37), 13, torch.float32), -1).to(dtype)
    got = j.jsd_launch(lq, lp, beta, {"BLOCK": 16, "num_warps": 4})
    want = j.jsd_ref(lq.float(), lp.float(), None, beta, reduction="none")
    assert (want >= -1e-6).all()
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_jsd_reductions_and_ignored_rows():
    from cudal1.kernelzoo import jsd

    lq, lp = torch.log_softmax(torch.randn(4, 6), -1), torch.log_softmax(torch.randn(4, 6), -1)
    labels = torch.tensor([1, -100, 2, -100])
    rows = jsd(lq, lp, labels, reduction="none")
    assert rows[1] == 0 and rows[3] == 0 and (rows[[0, 2]] > 0).all()
    torch.testing.assert_close(jsd(lq, lp, labels, reduction="sum"), rows.sum())
    torch.testing.assert_close(jsd(lq, lp, labels), rows.sum() / 2)
    # beta = 0 is the forward KL(P || Q): F.kl_div(log_q, log_p, log_target=True)
    torch.testing.assert_close(jsd(lq, lp, beta=0.0, reduction="sum"),
                               torch.nn.functional.kl_div(lq, lp, log_target=True, reduction="sum"))
    for kw, match in [({"beta": 1.5}, "beta must lie"), ({"reduction": "mean"}, "reduction must be one of")]:
        with pytest.raises(ValueError, match=match):
            jsd(lq, lp, **kw)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_options_match_torch(reduction, smoothing):
    from cudal1.kernelzoo import CrossEntropyLoss

    torch.manual_seed(0)
    logits = torch.randn(2, 3, 7, dtype=torch.float64, requires_grad=True)
    twin = logits.detach().clone().requires_grad_(True)
    targets = torch.tensor([[0, 6, -100], [3, -100, 2]])
    got = CrossEntropyLoss(label_smoothing=smoothing, reduction=reduction)(logits, targets)
    want = torch.nn.functional.cross_entropy(twin.flatten(0, 1), targets.flatten(), label_smoothing=smoothing,
                                             reduction=reduction)
    torch.testing.assert_close(got, want)
    w = torch.randn_like(got)
    (got * w).sum().backward()
    (want * w).sum().backward()
    torch.testing.assert_close(logits.grad, twin.grad)


def test_out_of_range_targets_and_ids_are_errors():
    from cudal1.kernelzoo import cross_entropy_loss, embedding_layer_norm

    with pytest.raises(ValueError, match=r"targets\[1\] = 7 is outside \[0, 7\) and is not ignore_index"):
        cross_entropy_loss(torch.randn(3, 7), torch.tensor([0, 7, -100]))
    cross_entropy_loss(torch.randn(3, 7), torch.tensor([0, 6, -100]))  # the twin: in range and ignored rows
    with pytest.raises(ValueError, match=r"ids\[0, 1\] = 5 is outside \[0, 5\)"):
        embedding_layer_norm(torch.tensor([[0, 5]]), torch.randn(5, 4), torch.randn(2, 4), torch.ones(4),
                             torch.zeros(4))
