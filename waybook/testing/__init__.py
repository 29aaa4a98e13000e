"""Conformance kits that a third-party adapter subclasses to prove itself."""

from waybook.testing._memory import MemoryPortConformance

__all__ = ["MemoryPortConformance"]
