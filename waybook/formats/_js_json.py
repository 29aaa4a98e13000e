"""JSON text exactly as JavaScript's `JSON.stringify` writes it, for formats whose files come from Node.

Python and JavaScript agree on almost everything, but not on numbers: JavaScript writes `0.000005` and
`1e-7` where Python writes `5e-06` and `1e-07`. Both choose the shortest digits
that read back to the same double; only the notation differs, and it follows ECMAScript's
Number::toString. JavaScript also escapes a lone surrogate (`\\ud800`), which Python would write raw.
One exception keeps files JavaScript did not write exact too: a whole number read as a float (`2.0`,
which JavaScript would have written `2`) keeps Python's spelling.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, Final

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def stringify(value: Any) -> str:
    """`JSON.stringify(value)`, without spacing: objects keep their key order."""
    parts: list[str] = []
    _write(value, parts.append)
    return "".join(parts)


def number(value: float) -> str:
    """A double as JavaScript writes it (ECMAScript Number::toString; NaN and infinities as `null`)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value.is_integer() and abs(value) < 1e21:
        # JavaScript writes 2 for 2.0, and that reads back as an int; a float like this came from a file
        # JavaScript did not write, so it keeps the spelling it had there (`2.0`)
        return repr(value)
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    scale = int(exponent or 0) - len(fraction)  # value = digits x 10^scale
    stripped = digits.rstrip("0")
    scale += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + scale  # value = 0.digits x 10^n
    sign = "-" if value < 0 else ""
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _write(value: Any, out: Callable[[str], object]) -> None:
    if value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, int):
        out(str(value))
    elif isinstance(value, float):
        out(number(value))
    elif isinstance(value, str):
        out(_string(value))
    elif isinstance(value, list | tuple):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(",")
            _write(item, out)
        out("]")
    elif isinstance(value, dict):
        out("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out(",")
            out(_string(str(key)))
            out(":")
            _write(item, out)
        out("}")
    else:
        msg = f"{type(value).__name__} is not a JSON value"
        raise TypeError(msg)
