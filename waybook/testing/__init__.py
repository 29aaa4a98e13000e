"""Conformance kits a third-party adapter subclasses to prove itself: the Memory port's (and the journal's)."""

from waybook.testing._memory import MemoryPortConformance

__all__ = ["MemoryPortConformance"]
