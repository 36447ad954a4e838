# ruff: noqa: B023  (each lambda is timed at once, inside its loop iteration)
"""Does cuDNN's fused convolution + bias (+ residual) + ReLU (``torch.cudnn_convolution_relu`` /
``torch.cudnn_convolution_add_relu``, used by ``cudal1.kernelzoo.blocks.conv_bn``) keep full fp32 when TF32 is off
(as the harness sets it), and is it faster than eager's conv + batch norm + ReLU on ResNet shapes? Prints, per
shape, the max relative error against an fp64 convolution with TF32 off and on (TF32 errors are ~1e-3), and the
CUDA-event time of eager vs fused. GPU only: ``python3 benchmarks/probes/probe_cudnn_fused.py``.
"""

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def timed(fn, reps=50):
    for _ in range(3):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / reps


def main() -> None:
    g = torch.Generator(device="cuda").manual_seed(0)
    shapes = [(10, 64, 56, 56, 64, 3, 1), (10, 256, 56, 56, 64, 1, 1), (10, 3, 224, 224, 64, 3, 1),
              (10, 512, 28, 28, 128, 1, 1), (10, 256, 14, 14, 256, 3, 1)]
    for n, c, h, w_, k, r, s in shapes:
        x = torch.randn(n, c, h, w_, device="cuda", generator=g)
        w = torch.randn(k, c, r, r, device="cuda", generator=g) / (c * r * r) ** 0.5
        b = torch.randn(k, device="cuda", generator=g)
        pad = r // 2
        ref = F.relu(F.conv2d(x.double(), w.double(), b.double(), s, pad))
        z = torch.randn_like(ref, dtype=torch.float32)
        ref_add = F.relu(F.conv2d(x.double(), w.double(), b.double(), s, pad) + z.double())
        fused = torch.cudnn_convolution_relu(x, w, b, (s, s), (pad, pad), (1, 1), 1)
        fused_add = torch.cudnn_convolution_add_relu(x, w, z, 1.0, b, (s, s), (pad, pad), (1, 1), 1)
        err = ((fused.double() - ref).abs().max() / ref.abs().max()).item()
        err_add = ((fused_add.double() - ref_add).abs().max() / ref_add.abs().max()).item()
        torch.backends.cudnn.allow_tf32 = True
        tf = torch.cudnn_convolution_relu(x, w, b, (s, s), (pad, pad), (1, 1), 1)
        torch.backends.cudnn.allow_tf32 = False
        err_tf32 = ((tf.double() - ref).abs().max() / ref.abs().max()).item()
        rm, rv = torch.randn(k, device="cuda"), torch.rand(k, device="cuda") + 0.5
        gam, bet = torch.randn(k, device="cuda"), torch.randn(k, device="cuda")
        eager = timed(lambda: F.relu(F.batch_norm(F.conv2d(x, w, None, s, pad), rm, rv, gam, bet, False, 0.0, 1e-5)))
        eager_add = timed(lambda: F.relu(F.batch_norm(F.conv2d(x, w, None, s, pad), rm, rv, gam, bet, False, 0.0,
                                                      1e-5) + z))
        fus = timed(lambda: torch.cudnn_convolution_relu(x, w, b, (s, s), (pad, pad), (1, 1), 1))
        fus_add = timed(lambda: torch.cudnn_convolution_add_relu(x, w, z, 1.0, b, (s, s), (pad, pad), (1, 1), 1))
        conv = timed(lambda: F.conv2d(x, w, None, s, pad))
        print(f"x{(n, c, h, w_)} k{k} r{r} s{s}: rel err fp32 {err:.2e} (add {err_add:.2e}), TF32 on {err_tf32:.2e}; "
              f"ms conv {conv:.3f} eager conv+bn+relu {eager:.3f} fused {fus:.3f}; +add eager {eager_add:.3f} "
              f"fused {fus_add:.3f}")


if __name__ == "__main__":
    main()
