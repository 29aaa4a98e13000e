"""Test ids the same in every process (pytest-xdist's workers must collect the same tests)."""

from __future__ import annotations

import re

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_addresses(text: str) -> str:
    """`text` with every object address (` at 0x7f...`) taken out."""
    return _ADDRESS.sub("", text)


def stable_id(value: object) -> str:
    """`repr(value)` without object addresses (`<object object>` for `object()`)."""
    return without_addresses(repr(value))
