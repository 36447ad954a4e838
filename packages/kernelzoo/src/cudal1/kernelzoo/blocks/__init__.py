"""Network building blocks shared by several KernelBench solutions (``kernelbench_v0/``): one implementation per
block instead of a copy in each task file. Not ops (no ``torch.library`` registration, forward only, inference
semantics: batch norms use their running statistics, as the harness evaluates both models in eval mode)."""
