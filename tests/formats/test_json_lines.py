"""A source line decodes to the value `json.loads` gives it, or fails as `json.loads` fails (issue 50).

The importers read each JSONL line with msgspec, several times faster than `json.loads`, and hand the
lines msgspec refuses to `json.loads`: the value (NaN, a number past a double, a lone surrogate) or the
error it gives is the answer. A journal's bytes follow from these values, so they must be the same
values as before, of the same types, and the real sessions of the fixtures must decode alike.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from waybook.formats._foreign import json_value

FIXTURES = Path("/work/shared/fixtures")

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


def same(one: Any, other: Any) -> bool:
    """Equal, with the same types throughout (1 is not 1.0, -0.0 is not 0.0, NaN is NaN)."""
    if type(one) is not type(other):
        return False
    if isinstance(one, float):
        both_nan = math.isnan(one) and math.isnan(other)
        return math.copysign(1, one) == math.copysign(1, other) and (one == other or both_nan)
    if isinstance(one, dict):
        return list(one) == list(other) and all(same(one[k], other[k]) for k in one)
    if isinstance(one, list):
        return len(one) == len(other) and all(same(a, b) for a, b in zip(one, other, strict=True))
    return bool(one == other)


def decoded(line: str) -> tuple[str, Any]:
    try:
        return "value", json_value(line)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


def expected(line: str) -> tuple[str, Any]:
    try:
        return "value", json.loads(line)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


def check_alike(line: str, where: object) -> None:
    got, want = decoded(line), expected(line)
    assert got[0] == want[0], where
    assert same(got[1], want[1]), where


@given(JSON)
def test_a_json_value_decodes_as_json_loads_decodes_it(value: Any) -> None:
    for line in (json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, indent=1)):
        check_alike(line, line)


@pytest.mark.parametrize(
    "line",
    [
        '{"a": NaN, "b": Infinity, "c": -Infinity}',
        '{"a": 1e400}',
        '{"a": "\\ud800"}',
        '{"a": "\\ud83d\\ude00"}',
        '{"a": 1, "a": 2}',
        '{"a": 123456789012345678901234567890, "b": -0, "c": -0.0, "d": 1.5e-400}',
        '{"a": 1} x',
        '{"a": "\x01"}',
        "\ufeff{}",
        "[" * 5000 + "]" * 5000,
        "",
        "nul",
        '{"a": 1.0000000000000000000000001, "b": 1E5, "c": 0.1}',
    ],
)
def test_a_line_msgspec_refuses_or_reads_otherwise_gets_json_loads_answer(line: str) -> None:
    check_alike(line, line)


def test_every_fixture_line_decodes_as_json_loads_decodes_it() -> None:
    files = sorted(FIXTURES.rglob("*.jsonl"))
    if not files:
        pytest.skip("no shared fixtures on this machine")
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            check_alike(line, path)
