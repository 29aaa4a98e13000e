"""Timestamps and ids for new records: cheap enough to call on every append.

`utc_now()` formats the wall clock as RFC 3339 UTC with milliseconds; the part up to the second is
formatted once per second and reused. `new_id()` hands out 16 hex characters from a pool filled by one
`os.urandom` call per 512 ids (so not a kernel call per id); a forked child discards the pool it
inherited, so parent and child never hand out the same ids. `SessionClock` is the clock a Session
uses: `utc_now()`, except that it never goes backwards (the wall clock can be stepped back).
"""

from __future__ import annotations

import os
import time
from time import time_ns
from typing import Final

_POOL_IDS: Final = 512
_MILLIS: Final = [f"{milli:03d}Z" for milli in range(1000)]
_ids: list[str] = []
_salts: list[str] = []
_cached: tuple[int, str] = (-1, "")  # (second, its formatted prefix): one tuple, so threads see a pair


def utc_now() -> str:
    """The current UTC time as RFC 3339 with milliseconds (`2026-12-01T09:30:00.123Z`), as in `at`."""
    global _cached
    ms = time_ns() // 1_000_000
    second = ms // 1000
    cached = _cached
    if second != cached[0]:
        cached = _cached = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return cached[1] + _MILLIS[ms % 1000]


def new_salt() -> str:
    """A fresh salt for sealed content: 16 bytes from the OS's CSPRNG (`os.urandom`, as `secrets` reads
    it) as 32 hex digits, drawn from a pool like `new_id`'s (forgotten in a forked child)."""
    try:
        return _salts.pop()
    except IndexError:
        pool = os.urandom(16 * _POOL_IDS).hex()
        _salts.extend([pool[i : i + 32] for i in range(0, len(pool), 32)])
        return _salts.pop()


def new_id() -> str:
    """A fresh random record id: 16 hex characters (64 random bits from the OS's CSPRNG)."""
    try:
        return _ids.pop()
    except IndexError:
        return _refill()


def _refill() -> str:
    pool = os.urandom(8 * _POOL_IDS).hex()
    _ids.extend([pool[i : i + 16] for i in range(0, len(pool), 16)])
    return _ids.pop()


def _forget_pool() -> None:
    _ids.clear()
    _salts.clear()


os.register_at_fork(after_in_child=_forget_pool)


class SessionClock:
    """`utc_now()` that never returns a time earlier than one it returned (or was shown) before.

    Timestamps of this exact format order as strings, so holding the latest one is the whole state.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = ""

    def __call__(self) -> str:
        global _cached
        ms = time_ns() // 1_000_000  # utc_now() inline (a frame less on every append)
        cached = _cached
        if ms // 1000 != cached[0]:
            cached = _cached = (ms // 1000, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(ms // 1000)))
        now = cached[1] + _MILLIS[ms % 1000]
        if now < self._last:
            return self._last
        self._last = now
        return now

    def observe(self, at: str) -> None:
        """A record written by someone else at `at`: never stamp a later record earlier than it."""
        if len(at) == 24 and at > self._last and at[19] == "." and at[23] == "Z":
            self._last = at
