"""cudal1.kernelzoo: not built yet (issue 4). This package deliberately exposes nothing."""

__all__: list[str] = []
