"""One module per op: reference (``*_ref``), Triton kernel, per-architecture configs, torch.library op."""
