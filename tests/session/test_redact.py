"""`Session(..., redact=True)` and `AsyncSession` (issue 46): secrets are masked before a record is
sealed or offloaded, so their bytes never reach the journal file, the store's database or its blobs; the
record says what kind was masked where (`details["waybook.redacted"]`, docs/journal-contract.md)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tests.helpers.secret_corpus import SECRETS
from waybook import AsyncSession, Session, ToolOutcome
from waybook._masking import SecretMask
from waybook.journal import InMemoryJournal, JsonlJournal, verify
from waybook.model import (
    InvalidArgumentError,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.projections import ContextProjection, for_provider, render_context, replay
from waybook.stores import open_store

TOKEN = next(secret for secret in SECRETS if secret.kind == "github-token")
DB = next(secret for secret in SECRETS if secret.kind == "url-password")


def raw(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


def converse(session: Session) -> None:
    session.user(f"deploy with {TOKEN.text} please")
    session.turn(
        [
            ToolCallBlock(
                call_id="t1", name="bash", arguments={"cmd": f"gh auth login --with-token {TOKEN.core}"}
            )
        ],
        [ToolOutcome("t1", f"connected to {DB.text}", details={"env": {"GH": TOKEN.core}})],
    )
    session.assistant("done")


def test_a_jsonl_file_never_holds_the_secret_and_the_record_says_what_was_masked_where(
    tmp_path: Path,
) -> None:
    with JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s") as journal:
        converse(Session(journal, redact=True))
    data = raw(tmp_path)
    assert TOKEN.core.encode() not in data
    assert DB.core.encode() not in data
    with JsonlJournal(tmp_path / "s.jsonl") as journal:
        assert verify(journal).ok
        records = list(journal.read())
    user = records[1].body
    assert isinstance(user, UserMessage)
    assert user.details == {
        "waybook.redacted": [{"field": "content", "block": 0, "kind": "github-token", "count": 1}]
    }
    result = next(r.body for r in records if isinstance(r.body, ToolResult))
    assert result.details is not None
    assert result.details["waybook.redacted"] == [
        {"field": "content", "block": 0, "kind": "url-password", "count": 1},
        {"field": "details", "kind": "github-token", "count": 1},
    ]
    assert result.details["env"] == {"GH": "[REDACTED:github-token]"}


@pytest.mark.parametrize("scheme", ["sqlite", "file"])
def test_a_store_and_its_blobs_never_hold_the_secret(tmp_path: Path, scheme: str) -> None:
    url = f"sqlite:{tmp_path}/s.db" if scheme == "sqlite" else f"file:{tmp_path}/store"
    with open_store(url) as store:
        session = Session(store.create("chat"), redact=True, blobs=store.blobs, inline_limit=256)  # type: ignore[arg-type]
        converse(session)
        session.user(f"a long paste {'x' * 400} with {TOKEN.text} in it")  # offloaded to a blob
        session.journal.close()
    assert TOKEN.core.encode() not in raw(tmp_path)
    assert DB.core.encode() not in raw(tmp_path)


def test_without_redact_the_secret_is_written_as_given(tmp_path: Path) -> None:
    with JsonlJournal.create(tmp_path / "s.jsonl", journal_id="s") as journal:
        converse(Session(journal))
    assert TOKEN.core.encode() in raw(tmp_path)  # the tests above can fail


def test_every_kind_the_detector_names_is_masked_before_it_is_written() -> None:
    journal = InMemoryJournal("corpus")
    session = Session.create(journal, redact=True)
    for secret in SECRETS:
        session.user(f"here: {secret.text}")
    lines = b"".join(journal.read_lines())
    leaked = [secret.kind for secret in SECRETS if secret.core.encode() in lines]
    assert leaked == []


def test_extra_patterns_mask_what_the_built_in_detector_does_not_know() -> None:
    journal = InMemoryJournal("extra")
    Session.create(journal, redact=[r"ACME-[0-9]{6}"]).user("ticket ACME-123456 and key " + TOKEN.text)
    line = b"".join(journal.read_lines())
    assert b"ACME-123456" not in line
    assert TOKEN.core.encode() not in line


def test_a_fork_of_a_redacting_session_keeps_redacting() -> None:
    session = Session.create(InMemoryJournal("a"), redact=True)
    first = session.user("hello")
    forked = session.fork(first.id, InMemoryJournal("b"))
    forked.user(f"key {TOKEN.text}")
    assert TOKEN.core.encode() not in b"".join(forked.journal.read_lines())  # type: ignore[attr-defined]


def test_the_async_session_masks_the_same_way() -> None:
    async def write() -> InMemoryJournal:
        journal = InMemoryJournal("async")
        session = await AsyncSession.create(journal, redact=True)
        await session.user(f"deploy with {TOKEN.text}")
        await session.turn(
            [ToolCallBlock(call_id="t1", name="bash", arguments={"token": TOKEN.core})],
            [ToolOutcome("t1", DB.text)],
        )
        return journal

    journal = asyncio.run(write())
    lines = b"".join(journal.read_lines())
    assert TOKEN.core.encode() not in lines
    assert DB.core.encode() not in lines
    assert b"waybook.redacted" in lines


@pytest.mark.parametrize("redact", ["yes", 1, [3], {"pattern": "x"}, ["("]])
def test_a_redact_option_that_is_not_one_is_refused_before_anything_is_written(redact: object) -> None:
    journal = InMemoryJournal("bad")
    with pytest.raises(InvalidArgumentError, match="redact"):
        Session.create(journal, redact=redact)  # type: ignore[arg-type]
    assert journal.head().seq == 0


def test_one_mask_shared_by_writers_in_threads_reports_each_records_own_counts() -> None:
    # an integration's writers share one mask (ADK's sessions and scopes, a saver's threads): without a
    # lock around each masking, one thread's finds were counted in another's record
    mask = SecretMask()
    start = threading.Barrier(6)
    wrong: list[tuple[int, int]] = []

    def write(k: int) -> None:
        start.wait()
        for i in range(300):
            secrets = (TOKEN.text.replace(TOKEN.core, f"{TOKEN.core[:-6]}{k:02d}{i:04d}") for _ in range(k))
            body = mask.body(UserMessage(parent=None, content=(TextBlock(text=" ".join(secrets)),)))
            assert body.details is not None
            found = body.details["waybook.redacted"][0]["count"]
            if found != k:
                wrong.append((k, found))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_masked_thinking_block_loses_its_signature_and_an_untouched_one_keeps_it() -> None:
    """A provider's signature covers the thinking as written (Claude's carries it, encrypted, for the
    provider): after masking it matches nothing, so it is not kept, and the context leaves that block
    out as it leaves out any unsigned thinking."""
    journal = InMemoryJournal("thinking")
    session = Session.create(journal, redact=True)
    session.user("go")
    masked = ThinkingBlock(thinking=f"use {TOKEN.text}", signature="sig-over-the-secret")
    kept = ThinkingBlock(thinking="plan the deploy", signature="sig-kept")
    record = session.assistant([masked, kept, TextBlock(text="ok")], model="claude-sonnet-4-5")
    first, second, _ = record.body.content  # type: ignore[union-attr]
    assert TOKEN.core not in first.thinking
    assert first.signature is None
    assert second == kept
    assert b"sig-over-the-secret" not in b"".join(journal.read_lines())
    state = replay(ContextProjection(), journal)
    shown = for_provider(render_context(state.tree, state.refs, journal), "anthropic")
    (assistant,) = [m for m in shown.messages if m["role"] == "assistant"]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text"]
