"""Timeouts every waiting call takes (a store's `wait`, a subscription's `next`, a blackboard's `wait`),
checked one way: a number of seconds or None, never NaN.

What a checked timeout means: None waits without limit; so does any timeout past `WAIT_MAX` (a year),
infinity included, because no clock the waiting calls use can count further (`threading` refuses a
timeout past `threading.TIMEOUT_MAX` with OverflowError); zero or less does not block. NaN, a bool and
anything that is not a number are refused with the caller's typed error before anything waits.
"""

from __future__ import annotations

from typing import Final

from waybook.model import InvalidArgumentError

WAIT_MAX: Final = 86_400.0 * 365
"""A wait longer than a year waits as `timeout=None` (without limit)."""


def check_timeout(
    timeout: object, *, what: str = "timeout", error: type[Exception] = InvalidArgumentError
) -> float | None:
    """`timeout` in seconds as a waiting call uses it (None: no limit; 0.0: do not block), or `error`
    naming `what` for NaN, a bool or a value that is not a number."""
    if timeout is None:
        return None
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout != timeout:
        msg = (
            f"{what} {timeout!r:.40} must be a number of seconds (0 or less: do not wait), or None to "
            "wait without limit"
        )
        raise error(msg)
    if timeout > WAIT_MAX:  # compared before float(): an int past a float's range is still a number
        return None
    return float(timeout) if timeout > 0 else 0.0


SETTING_MAX: Final = 86_400.0
"""The longest a setting in seconds may be (a store's busy timeout, how long it retries): a day."""


def check_seconds(
    value: object, *, what: str, error: type[Exception] = InvalidArgumentError, most: float = SETTING_MAX
) -> float:
    """A setting in seconds (a busy timeout, a retry period), checked: a number from 0 to `most`,
    else `error` naming `what`. Unlike a wait's timeout it has no "without limit": it bounds a wait."""
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value == value  # not NaN
        and 0 <= value <= most
    ):
        return float(value)
    msg = f"{what}={value!r:.40} must be a number of seconds from 0 to {most:g}"
    raise error(msg)
