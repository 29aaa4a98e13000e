"""The documented path of `waybook.memory.tools.reflection`."""

from waybook.memory.tools.reflection import *  # noqa: F403
