"""cudal1.policy: not built yet (issue 6). This package deliberately exposes nothing."""

__all__: list[str] = []
