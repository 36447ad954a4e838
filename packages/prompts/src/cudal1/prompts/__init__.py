"""cudal1.prompts: not built yet (issue 5). This package deliberately exposes nothing."""

__all__: list[str] = []
