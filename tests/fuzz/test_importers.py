"""Every importer, fed structure-aware garbage, answers with a typed waybook error or valid records.

The property (issue 27, finding 3): an import either yields records every journal rule accepts, or
raises a `JournalError` subclass with a one-line message; never a KeyError, RecursionError, TypeError
or AttributeError from inside. The default run tries a few dozen inputs per importer; `-m slow` tries
many more.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz import seeds
from tests.fuzz.garbage import WRONG, dumps, hostile_lines, mutated, nested
from waybook.formats import import_claude_code, import_codex, import_openai_agents, import_pi
from waybook.formats.openai_agents._import import Row
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, JournalError

FEW, MANY = 40, 1500


def staged(records: Any) -> None:
    """What an import does with records before writing: every rule checked in a journal."""
    InMemoryJournal("fuzz").append(list(records), expected=GENESIS)


def holds(run: Callable[[], Any]) -> None:
    error = None
    try:
        staged(run().records)
    except JournalError as exc:
        error = str(exc)
    assert error is None or (error.strip() and "\n" not in error), "a typed error in one line"


def _lines(importer: Callable[..., Any]) -> Callable[[bytes, bool], None]:
    def check(data: bytes, lenient: bool) -> None:
        holds(lambda: importer(data, lenient=lenient))

    return check


CASES = {
    "claude-code": (_lines(import_claude_code), seeds.CLAUDE_CODE),
    "codex": (_lines(import_codex), seeds.CODEX),
    "pi": (_lines(import_pi), seeds.PI),
}


def _rows(items: list[Any], nulls: list[bool]) -> list[Row]:
    rows = []
    for number, (item, null) in enumerate(zip(items, nulls, strict=False), start=1):
        data: Any = None if null else dumps(item)
        rows.append(Row(id=number, data=data, created_at="2026-01-01 00:00:00"))
    return rows


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_seed_of_each_format_imports(name: str) -> None:
    _, seed = CASES[name]
    data = "\n".join(json.dumps(line) for line in seed).encode()
    staged({"claude-code": import_claude_code, "codex": import_codex, "pi": import_pi}[name](data).records)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=FEW)
@given(data=st.data(), lenient=st.booleans())
def test_a_mutated_file_is_imported_or_refused_typed(name: str, data: st.DataObject, lenient: bool) -> None:
    check, seed = CASES[name]
    check(data.draw(hostile_lines(seed)), lenient)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=MANY)
@given(data=st.data(), lenient=st.booleans())
def test_many_mutated_files_are_imported_or_refused_typed(
    name: str, data: st.DataObject, lenient: bool
) -> None:
    check, seed = CASES[name]
    check(data.draw(hostile_lines(seed)), lenient)


@st.composite
def agent_rows(draw: st.DrawFn) -> list[Row]:
    items = [draw(mutated(item)) for item in seeds.OPENAI_AGENTS]
    nulls = [draw(st.booleans()) and draw(st.booleans()) for _ in items]
    return _rows(items, nulls)


@settings(max_examples=FEW)
@given(rows=agent_rows(), lenient=st.booleans())
def test_openai_agents_rows_with_nulls_and_missing_keys_import_or_are_refused_typed(
    rows: list[Row], lenient: bool
) -> None:
    holds(lambda: import_openai_agents("s", rows, None, lenient=lenient))


@pytest.mark.slow
@settings(max_examples=MANY)
@given(rows=agent_rows(), lenient=st.booleans())
def test_many_openai_agents_rows_import_or_are_refused_typed(rows: list[Row], lenient: bool) -> None:
    holds(lambda: import_openai_agents("s", rows, None, lenient=lenient))


# --- the findings, one each --------------------------------------------------------------------


def test_a_claude_code_first_line_of_100000_nested_arrays_is_a_typed_error() -> None:
    data = ("[" * 100_000 + "]" * 100_000 + "\n" + json.dumps(seeds.CLAUDE_CODE[0])).encode()
    holds(lambda: import_claude_code(data))
    with pytest.raises(JournalError):
        import_claude_code(data)


def test_a_claude_code_line_with_a_map_where_its_uuid_belongs_is_a_typed_error() -> None:
    lines = [dict(line) for line in seeds.CLAUDE_CODE]
    lines[1]["uuid"] = {"not": "a uuid"}
    lines[2]["parentUuid"] = ["a1"]
    with pytest.raises(JournalError):
        staged(import_claude_code("\n".join(map(json.dumps, lines))).records)


def test_openai_agents_rows_with_null_message_data_are_a_typed_error_or_skipped() -> None:
    rows = _rows(seeds.OPENAI_AGENTS, [False, True, False, False])
    with pytest.raises(JournalError):
        import_openai_agents("s", rows, None)
    holds(lambda: import_openai_agents("s", rows, None, lenient=True))


def test_an_openai_agents_function_call_without_call_id_is_a_typed_error() -> None:
    items = [dict(item) for item in seeds.OPENAI_AGENTS]
    del items[1]["call_id"]
    del items[2]["call_id"]
    with pytest.raises(JournalError):
        staged(import_openai_agents("s", _rows(items, [False] * 4), None).records)


def test_nan_and_infinity_in_arguments_are_imported_or_refused_typed() -> None:
    lines = [json.loads(json.dumps(line)) for line in seeds.CLAUDE_CODE]
    lines[1]["message"]["content"][1]["input"] = {"n": float("nan"), "i": float("inf")}
    holds(lambda: import_claude_code("\n".join(json.dumps(line) for line in lines)))


@settings(max_examples=FEW)
@given(name=st.sampled_from(sorted(CASES)), data=st.data(), lenient=st.booleans())
def test_the_import_command_writes_a_verified_journal_or_nothing(
    tmp_path_factory: pytest.TempPathFactory, name: str, data: st.DataObject, lenient: bool
) -> None:
    from waybook.cli import main
    from waybook.journal import JsonlJournal, verify

    work = tmp_path_factory.mktemp("import")
    source = work / "session.jsonl"
    source.write_bytes(data.draw(hostile_lines(CASES[name][1])))
    out = work / "out" / "s.jsonl"
    out.parent.mkdir()
    status = main(["import", name, str(source), "-o", str(out), *(["--lenient"] if lenient else [])])
    assert status in (0, 1, 2)
    if status != 0:
        assert list(out.parent.iterdir()) == []
    else:
        with JsonlJournal(out, create=False, readonly=True) as journal:
            assert verify(journal).ok


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_import_command_refuses_a_first_line_of_100000_nested_arrays_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    from waybook.cli import main

    source = tmp_path / "session.jsonl"
    source.write_text(
        "[" * 100_000 + "]" * 100_000 + "\n" + "\n".join(json.dumps(line) for line in CASES[name][1])
    )
    status = main(["import", name, str(source), "-o", str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err
    assert status == 1
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "row",
    [(1, 5, "{}", None), (1, "s", None, 7), (1, "s", b"\x00\xff", 3.5), ("x", "s", "{}", None)],
    ids=["session id a number", "NULL message_data", "bytes message_data", "id not a number"],
)
def test_an_agents_database_with_wrong_column_types_is_refused_typed_or_skipped(
    tmp_path: Path, row: tuple[Any, ...]
) -> None:
    import sqlite3

    from waybook.formats.openai_agents._database import read_session

    path = tmp_path / "agents.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE agent_messages (id, session_id, message_data, created_at)")
        connection.execute("INSERT INTO agent_messages VALUES (?, ?, ?, ?)", row)
        connection.execute(
            "INSERT INTO agent_messages VALUES (2, 's', ?, NULL)", (json.dumps(seeds.OPENAI_AGENTS[0]),)
        )

    def load() -> None:
        session, rows, branches = read_session(path, "s" if row[1] == "s" else None)
        import_openai_agents(session, rows, branches)

    with pytest.raises(JournalError):
        load()


@given(data=st.data())
def test_a_hostile_container_is_a_new_object_on_every_draw(data: st.DataObject) -> None:
    # Found in a full run (15e23bb): `st.just` handed one dict to every example, and a test that wrote
    # into what it drew changed the input of the test that ran after it.
    assert_fresh(data.draw(WRONG), data.draw(WRONG))


def test_the_freshness_check_holds_for_two_draws_nested_1993_deep() -> None:
    # Found in a full run (w-faces): the check compared the two draws with `==` first, which recursed
    # past Python's limit on two 1,993-deep lists (RecursionError in the test, no waybook code run).
    assert_fresh(nested(1993), nested(1993))


def assert_fresh(first: object, second: object) -> None:
    """Two draws of a container are two objects (compared by identity: a deep value cannot be compared
    by `==` without recursing past Python's limit)."""
    if isinstance(first, dict | list):
        assert first is not second
