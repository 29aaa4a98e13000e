"""Conformance kits a third-party adapter subclasses to prove itself: the journal's and the Memory port's.

`JournalContract` and `StoreJournalContract` (docs/journal-contract.md, "Prove your adapter") are pytest
test classes: they need the `test` extra (`pip install 'waybook[test]'`: pytest, and hypothesis for the
state machine), so they load on first use and importing this package needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from waybook.testing._memory import MemoryPortConformance

if TYPE_CHECKING:
    from waybook.testing._journal import JournalContract, StoreJournalContract

__all__ = ["JournalContract", "MemoryPortConformance", "StoreJournalContract"]

_NEEDS_PYTEST = frozenset({"JournalContract", "StoreJournalContract"})


def __getattr__(name: str) -> Any:
    if name not in _NEEDS_PYTEST:
        msg = f"module 'waybook.testing' has no attribute {name!r}"
        raise AttributeError(msg)
    try:
        from waybook.testing import _journal
    except ImportError as missing:
        if missing.name not in {"pytest", "_pytest"}:
            raise
        msg = f"waybook.testing.{name} is a pytest test class: pip install 'waybook[test]'"
        raise ImportError(msg) from missing
    return getattr(_journal, name)
