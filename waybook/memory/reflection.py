"""The documented path of `waybook.memory.tools.reflection`."""

from waybook.memory.tools.reflection import *  # noqa: F403
from waybook.memory.tools.reflection import __all__ as __all__
