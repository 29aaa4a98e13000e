"""The documented path of `waybook.memory.canonical.receipts`."""

from waybook.memory.canonical.receipts import *  # noqa: F403
from waybook.memory.canonical.receipts import __all__ as __all__
