"""Thin adapters to other runtimes' interfaces; each imports its runtime lazily and is an extra."""

__all__: list[str] = []  # the public modules are the surface (docs/architecture.md)
