"""Structure-aware garbage: real-shaped inputs with values swapped for the wrong thing.

`mutated(seed)` draws a copy of a JSON value in which some values are replaced (by a wrong type, a
NULL, NaN or infinity, a huge or deep value, a long name), some keys are deleted, and some maps gain a
key they should not have. The seeds are small valid inputs of each format, so the garbage reaches the
code past the first type check.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import strategies as st

DEEP = 100_000

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["", "x" * 5000, "\x00", "\ud800", "../../etc/passwd", "a" * 300, "lc", "__proto__"]),
)
WRONG = st.one_of(
    LEAVES,
    # Built afresh for every draw: `st.just` would hand every example the same object, so a test that
    # changes what it drew would change the next example's value too.
    st.builds(lambda: {"uuid": "not a uuid"}),
    st.builds(lambda: [1, [2, [3]]]),
    st.builds(dict),
    st.builds(list),
    st.recursive(
        LEAVES,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ),
    st.integers(min_value=50, max_value=3000).map(lambda n: nested(n)),
)


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def mutated(draw: st.DrawFn, seed: Any, rate: float = 0.15) -> Any:
    """A copy of `seed` with some values replaced, some keys removed and some keys added."""

    def walk(value: Any) -> Any:
        if draw(st.floats(0, 1)) < rate:
            return draw(WRONG)
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if draw(st.floats(0, 1)) < rate / 2:
                    continue  # a missing key
                out[key] = walk(item)
            if draw(st.floats(0, 1)) < rate / 3:
                out[
                    draw(
                        st.sampled_from(["id", "type", "content", "uuid", "parentUuid", "call_id", "x" * 300])
                    )
                ] = draw(WRONG)
            return out
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(seed)


def dumps(value: Any) -> str:
    """JSON text as a hostile writer produces it: NaN and Infinity allowed, deep nesting kept."""
    try:
        return json.dumps(value, allow_nan=True)
    except (RecursionError, ValueError):
        return "[" * DEEP + "]" * DEEP


@st.composite
def hostile_lines(draw: st.DrawFn, seeds: list[dict[str, Any]]) -> bytes:
    """A JSONL file: the seed lines mutated, and sometimes a raw hostile line among them."""
    lines = [dumps(draw(mutated(line))) for line in seeds]
    extras = st.sampled_from(
        [
            "[" * DEEP + "]" * DEEP,
            '{"a":' * 5000 + "1" + "}" * 5000,
            "x" * 200_000,
            '{"type": "user", "uuid": {"not": "a uuid"}}',
            "NaN",
            "\x00\x01\x02",
            '{"type":"user","message":' + "[" * DEEP + "]" * DEEP + "}",
        ]
    )
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(extras))
    return "\n".join(lines).encode("utf-8", "surrogatepass")
