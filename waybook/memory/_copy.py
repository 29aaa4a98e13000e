"""Caller values copied once, into exact built-in values, before anything checks them.

A request is validated on its copy and the copy is what is written: a caller who changes its objects
afterwards (from another thread) changes nothing, and an object whose methods lie (a `str` subclass
whose `startswith` says yes, a mapping whose `items` differ from call to call, a list that changes as it
is read) is read exactly once, as what it holds, and then never consulted again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def exact(value: Any) -> Any:
    """`value` as an exact built-in when it is a str, int or float (a subclass's own methods are never
    called again: `str.__str__` copies the characters, `int.__int__` the number); anything else as it
    is, for the validation to refuse or take apart."""
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if type(value) is int else int.__int__(value)
    if isinstance(value, float):
        return value if type(value) is float else float.__float__(value)
    return value


def items_of(value: Any) -> tuple[tuple[Any, Any], ...] | None:
    """A mapping's (key, value) pairs, read once, keys and values copied by `exact`; None if `value` is
    not a mapping."""
    if not isinstance(value, Mapping):
        return None
    return tuple((exact(key), exact(item)) for key, item in tuple(value.items()))


def sequence_of(value: Any) -> tuple[Any, ...] | None:
    """The items of a list or tuple (or any iterable that is not a string or a mapping), read once and
    copied by `exact`; None when `value` is not such a collection."""
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        return None
    return tuple(exact(item) for item in tuple(value))
