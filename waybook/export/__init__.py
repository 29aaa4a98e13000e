"""Exports: trajectories for training (`waybook.export.trajectories`) and archival copies."""

__all__: list[str] = []  # the public modules are the surface (docs/architecture.md)
