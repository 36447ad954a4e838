"""``import cudal1.kernelzoo`` and the CPU fallback work where Triton is not installed (macOS, Windows, CPU-only
installs); launching a Triton kernel there says what to install. Run in a fresh interpreter in which
``import triton`` fails, as it does on those machines."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["triton"] = None          # `import triton` raises ImportError from here on
    sys.modules["triton.language"] = None
    import torch
    import cudal1.kernelzoo as kz
    from cudal1.kernelzoo import _triton
    from cudal1.kernelzoo.ops import softmax as softmax_mod
    from cudal1.kernelzoo.solutions import available
    assert _triton.HAVE_TRITON is False
    x = torch.randn(4, 33, requires_grad=True)
    w = torch.randn(33, requires_grad=True)
    torch.testing.assert_close(kz.softmax(x), torch.softmax(x, -1))
    kz.rms_norm(x, w).sum().backward()
    assert x.grad is not None and w.grad is not None
    assert _triton.triton.cdiv(10, 4) == 3 and _triton.triton.next_power_of_2(33) == 64
    assert len(available()) > 0
    import torch.nn.functional as F
    from cudal1.kernelzoo.blocks import small_conv
    xc, wc = torch.randn(2, 3, 9, 9), torch.randn(3, 1, 3, 3)
    torch.testing.assert_close(small_conv.depthwise_conv2d(xc, wc, None), F.conv2d(xc, wc, None, 1, 0, 1, 3))
    try:
        softmax_mod.softmax_launch(torch.randn(2, 8))
    except _triton.TritonUnavailableError as e:
        assert "pip install triton" in str(e), e
    else:
        raise AssertionError("a Triton launch without Triton did not raise")
    print("ok")
""")


def test_the_zoo_imports_and_runs_on_cpu_without_triton():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
