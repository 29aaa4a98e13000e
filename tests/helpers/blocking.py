"""Calls that may block forever on a hostile input (a FIFO): run with a deadline, so that a regression
fails its test instead of hanging the suite."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def outcome(run: Callable[[], Any], *, within: float = 30.0) -> Any:
    """`run()`'s result, or the exception it raised (returned, not raised); a run still blocked after
    `within` seconds fails the test (it is left waiting on a daemon thread) instead of hanging the suite."""
    got: list[Any] = []

    def target() -> None:
        try:
            got.append(run())
        except BaseException as exc:
            got.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(within)
    assert not thread.is_alive(), f"still blocked after {within:.0f} s"
    (result,) = got
    return result


def finishes(run: Callable[[], Any], *, within: float = 30.0) -> Any:
    """`run()`'s result, or its exception raised; a run still blocked after `within` seconds fails the
    test (it is left waiting on a daemon thread) instead of hanging the suite."""
    result = outcome(run, within=within)
    if isinstance(result, BaseException):
        raise result
    return result
