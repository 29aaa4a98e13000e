"""The public API and the CLI, given hostile arguments: a typed error, nothing changed, no hang.

Issue 27, finding 3: store URLs the parser let through to a raw ValueError, a NaN timeout that made
`wait` block forever, cursors of infinity or past 2**63 that overflowed, non-journals given to Session,
AsyncSession and resume, and a sub-agent folder linked outside the session's folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz import seeds
from waybook import AsyncSession, Session, resume
from waybook.cli import main
from waybook.model import JournalError
from waybook.stores import JournalStore, open_store

URLS = ["memory:", "file:{tmp}/d", "sqlite:{tmp}/s.db"]


def files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and modification time: what "nothing changed" compares."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.fixture(params=URLS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JournalStore]:
    opened = open_store(request.param.format(tmp=tmp_path))
    opened.create("j1")
    yield opened
    opened.close()


# --- store URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:{tmp}/F.db?durability=bogus",
        "file:{tmp}/D?durability=",
        "postgresql://u@127.0.0.1:99999/db",
        "postgresql://u@127.0.0.1:abc/db",
        "postgresql://u@[::1/db",
        "sqlite:{tmp}/s.db?busy_timeout=nan",
        "file:" + "x" * 5000,
        "memory:?x=1",
    ],
)
def test_a_hostile_store_url_is_a_typed_error_and_creates_nothing(tmp_path: Path, url: str) -> None:
    before = files(tmp_path)
    with pytest.raises(JournalError):
        open_store(url.format(tmp=tmp_path))
    assert files(tmp_path) == before


@settings(max_examples=60)
@given(scheme=st.sampled_from(["file:", "sqlite:", "memory:", "x:", ""]), rest=st.text(max_size=40))
def test_any_store_url_opens_or_is_a_typed_error(scheme: str, rest: str) -> None:
    if scheme in ("file:", "sqlite:"):
        rest = "/nonexistent-waybook-fuzz/" + rest  # nothing can be created there
    with contextlib.suppress(JournalError):
        open_store(scheme + rest).close()


COMMANDS = ["ls", "show", "log", "verify", "tree", "export", "search", "gc", "diff"]
OPTIONS = ["--store", "--json", "-o", "--redact", "--format", "--limit", "--after", "--since", "-n"]


@settings(max_examples=40)
@given(
    command=st.sampled_from(COMMANDS),
    args=st.lists(
        st.one_of(
            st.sampled_from(OPTIONS),
            st.sampled_from(
                ["nan", "inf", "-1", "99999999999999999999", "sqlite:?durability=bogus", "x" * 300]
            ),
            st.text(
                alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=12
            ),
        ),
        max_size=5,
    ),
)
def test_the_cli_given_garbage_options_exits_with_a_status_and_no_traceback(
    tmp_path_factory: pytest.TempPathFactory, command: str, args: list[str]
) -> None:
    here = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("cli"))
    try:
        status = main([command, *args])
    except SystemExit as exit_:  # argparse refusing an option: status 2
        status = int(exit_.code or 0)
    finally:
        os.chdir(here)
    assert status in (0, 1, 2)


def test_the_cli_names_a_bogus_durability_in_one_line_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["ls", "--store", f"sqlite:{tmp_path}/F.db?durability=bogus"])
    err = capsys.readouterr().err
    assert status != 0
    assert "durability" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert files(tmp_path) == {}


# --- waits and cursors ------------------------------------------------------------------------------


def test_wait_with_a_nan_timeout_is_refused_instead_of_blocking_forever(store: JournalStore) -> None:
    head = store.feed_head()
    outcome: list[BaseException | bool] = []

    def waiting() -> None:
        try:
            outcome.append(store.wait(head, timeout=math.nan))
        except BaseException as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=waiting, daemon=True)  # a regression blocks only this thread
    waiter.start()
    waiter.join(timeout=30)
    assert outcome, "wait(timeout=nan) blocked"
    assert isinstance(outcome[0], JournalError)
    assert "timeout" in str(outcome[0])


@pytest.mark.parametrize("timeout", [-1.0, 0, 1e308, math.inf])
def test_wait_with_an_extreme_timeout_returns(store: JournalStore, timeout: float) -> None:
    assert store.wait(0, timeout=timeout) is True  # the feed has j1's records: no wait at all
    if timeout <= 0:
        assert store.wait(store.feed_head(), timeout=timeout) is False


def test_an_async_wait_with_a_nan_timeout_is_refused(tmp_path: Path) -> None:
    from waybook.stores import open_async_store

    async def go() -> None:
        store = await open_async_store("memory:")
        try:
            with pytest.raises(JournalError, match="timeout"):
                await store.wait(0, timeout=math.nan)
        finally:
            await store.close()

    asyncio.run(go())


BAD_CURSORS: list[Any] = [math.inf, -math.inf, math.nan, 2**70, -1, 1.5, "x", "1e3", "-3", {}, True]


@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=repr)
def test_a_list_cursor_out_of_range_is_a_typed_error(store: JournalStore, cursor: Any) -> None:
    with pytest.raises(JournalError):
        store.list(after=cursor)


@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=repr)
def test_a_feed_position_out_of_range_is_a_typed_error(store: JournalStore, cursor: Any) -> None:
    with pytest.raises(JournalError):
        list(store.feed(cursor))
    with pytest.raises(JournalError):
        list(store.feed(0, limit=cursor)) if cursor != -1 else store.feed(0, limit=-1)


@pytest.mark.parametrize("after", [2**63, 2**70])
def test_a_read_past_any_seq_reads_nothing(store: JournalStore, after: int) -> None:
    with store.open("j1") as journal:
        assert list(journal.read(after)) == []
        assert len(list(journal.read(0, 2**70))) == 1


# --- things that are not journals ---------------------------------------------------------------------


NOT_JOURNALS: list[Any] = ["session.jsonl", Path("x.jsonl"), 1, None, b"x", object(), {}]


# Ids the same in every process (pytest-xdist's workers must collect the same tests): a repr of object()
# holds its address.
@pytest.mark.parametrize("thing", NOT_JOURNALS, ids=lambda t: "object()" if type(t) is object else repr(t))
def test_a_session_of_something_that_is_not_a_journal_is_a_typed_error(thing: Any) -> None:
    with pytest.raises(JournalError, match="takes a journal"):
        Session(thing)
    with pytest.raises(JournalError, match="takes a journal"):
        AsyncSession(thing)


@pytest.mark.parametrize("path", ["x" * 200_000, "a/" * 3000 + "x", 1, None], ids=lambda p: repr(p)[:20])
def test_resume_of_an_impossible_path_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JournalError):
        resume(path)
    assert files(tmp_path) == {}


# --- a sub-agent folder linked outside the session's folder ------------------------------------------


def test_a_subagents_folder_linked_outside_the_session_folder_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    session = project / "s1.jsonl"
    session.write_text("\n".join(json.dumps(line) for line in seeds.CLAUDE_CODE) + "\n")
    secret = [dict(line, sessionId="s1", isSidechain=True, agentId="x") for line in seeds.CLAUDE_CODE]
    (outside / "agent-x.jsonl").write_text("\n".join(json.dumps(line) for line in secret) + "\n")
    (project / "s1").mkdir()
    (project / "s1" / "subagents").symlink_to(outside)
    out = tmp_path / "out"
    out.mkdir()
    status = main(["import", "claude-code", str(session), "-o", str(out / "s.jsonl")])
    err = capsys.readouterr().err
    assert status != 0
    assert "outside the session's folder" in err
    assert list(out.iterdir()) == []
