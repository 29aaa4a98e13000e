"""Issue 32: wrong-typed model input reads exactly as the SDK's reference tool answers it.

Hypothesis draws commands whose fields hold values of any JSON-ish type (and NaN, infinities, booleans
where numbers go, numbers where strings go) and runs each through the reference
(`BetaLocalFilesystemMemoryTool`, a temporary directory) and waybook's tool. The only difference allowed
is the one docs/memory.md lists for these inputs: waybook refuses a file name without an allowed
extension.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.memory.anthropic_reference import Pair

FIELDS = {
    "view": ("path", "view_range"),
    "create": ("path", "file_text"),
    "str_replace": ("path", "old_str", "new_str"),
    "insert": ("path", "insert_line", "insert_text"),
    "delete": ("path",),
    "rename": ("old_path", "new_path"),
}
GOOD = {
    "path": "/memories/a.md",
    "view_range": [1, 2],
    "file_text": "x\n",
    "old_str": "1",
    "new_str": "2",
    "insert_line": 1,
    "insert_text": "y",
    "old_path": "/memories/a.md",
    "new_path": "/memories/b.md",
}
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "1", "x", "/memories/a.md", "/memories/b.md", "/memories", "/memories/d/"]),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.sampled_from("ab"), SCALARS))


def refused_extension(ours: tuple[str, str]) -> bool:
    return ours[0] == "error" and "files must end in one of" in ours[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    command=st.sampled_from(sorted(FIELDS)),
    data=st.data(),
)
def test_wrong_typed_fields_read_as_the_reference_answers(command: str, data: st.DataObject) -> None:
    base = Path(tempfile.mkdtemp(prefix="waybook-hostile-"))
    try:
        pair = Pair(base)
        pair.same({"command": "create", "path": "/memories/a.md", "file_text": "1\n2\n3\n"})
        tool_input: dict[str, Any] = {"command": command, **{f: GOOD[f] for f in FIELDS[command]}}
        for field in data.draw(st.sets(st.sampled_from(FIELDS[command]), min_size=1)):
            if data.draw(st.booleans(), label=f"drop {field}") and field != "path":
                del tool_input[field]
            else:
                tool_input[field] = data.draw(VALUES, label=field)
        reference, ours = pair.both(tool_input)
        if ours != reference:
            assert refused_extension(ours), f"{tool_input!r}:\n ours      {ours!r}\n reference {reference!r}"
        elif reference[0] == "ok":
            assert pair.our_files() == pair.reference_files()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": "view", "path": "/memories/a.md", "view_range": [math.nan, 2]},
        {"command": "view", "path": "/memories/a.md", "view_range": [1, math.nan]},
        {"command": "view", "path": "/memories/a.md", "view_range": [math.nan, math.nan]},
        {"command": "view", "path": "/memories/a.md", "view_range": [True, False]},
        {"command": "insert", "path": "/memories/a.md", "insert_line": "1", "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": "one", "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": True, "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": False, "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": math.nan, "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": math.inf, "insert_text": "x"},
    ],
    ids=repr,
)
def test_nan_ranges_and_string_or_bool_lines_are_answered_as_the_reference_answers(
    tool_input: dict[str, Any], tmp_path: Path
) -> None:
    pair = Pair(tmp_path)
    pair.same({"command": "create", "path": "/memories/a.md", "file_text": "1\n2\n3\n"})
    pair.same(tool_input)
    assert pair.our_files() == pair.reference_files()
