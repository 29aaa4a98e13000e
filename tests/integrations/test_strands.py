"""WaybookSessionRepository beyond Strands' own tests: a second process that is behind cannot overwrite
a message, a redaction erases nothing, and deleting a session keeps its journals."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("strands")

from strands.types.exceptions import SessionException
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from tests.integrations.runtime_checks import recorded, run_python, tree
from waybook.integrations.strands import WaybookSessionRepository
from waybook.model import AssistantMessage, ToolCallBlock, ToolResult, UserMessage
from waybook.stores import open_store


def says(role: str, text: str, message_id: int) -> SessionMessage:
    return SessionMessage(message={"role": role, "content": [{"text": text}]}, message_id=message_id)  # type: ignore[typeddict-item]


def started(url: str) -> WaybookSessionRepository:
    repository = WaybookSessionRepository(open_store(url))
    repository.create_session(Session(session_id="s", session_type=SessionType.AGENT))
    repository.create_agent("s", SessionAgent(agent_id="a", state={}, conversation_manager_state={}))
    repository.create_message("s", "a", says("user", "hello", 0))
    return repository


def test_a_writer_behind_another_process_cannot_create_the_message_it_created(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    repository = started(url)
    run_python(
        f"""
        from strands.types.session import SessionMessage
        from waybook.integrations.strands import WaybookSessionRepository
        from waybook.stores import open_store
        message = {{"role": "assistant", "content": [{{"text": "theirs"}}]}}
        theirs = SessionMessage(message=message, message_id=1)
        WaybookSessionRepository(open_store({url!r})).create_message("s", "a", theirs)
        """
    )
    with pytest.raises(SessionException, match="Message 1 already exists"):
        repository.create_message("s", "a", says("assistant", "mine", 1))
    stored = WaybookSessionRepository(open_store(url)).list_messages("s", "a")
    assert [m.message["content"][0]["text"] for m in stored] == ["hello", "theirs"]


def test_a_redaction_is_a_leaf_move_and_the_journal_keeps_the_original(tmp_path: Path) -> None:
    repository = started(f"file:{tmp_path / 'store'}")
    store = repository.store
    repository.create_message("s", "a", says("user", "my card is 4111", 1))
    repository.create_message("s", "a", says("assistant", "noted", 2))
    redacted = says("user", "my card is 4111", 1)
    redacted.redact_message = {"role": "user", "content": [{"text": "[redacted]"}]}
    repository.update_message("s", "a", redacted)
    stored = repository.list_messages("s", "a")
    assert [m.to_message()["content"][0]["text"] for m in stored] == ["hello", "[redacted]", "noted"]
    journal_id = repository.journal_ids("s", "a")
    assert journal_id is not None
    shown = tree(tmp_path / "store", journal_id)
    assert len(shown["branches"]) == 2
    assert [move["reason"] for move in shown["moves"]] == ["strands: update_message 1"]
    assert (
        recorded(store, journal_id).count("my card is 4111") >= 2
    )  # the original, and the redacted record's


def test_deleting_a_session_resets_its_journals_and_keeps_their_records(tmp_path: Path) -> None:
    repository = started(f"file:{tmp_path / 'store'}")
    store = repository.store
    repository.delete_session("s")
    assert repository.read_session("s") is None
    assert repository.list_messages("s", "a") == []
    journal_id = repository.journal_ids("s", "a")
    assert journal_id is not None
    assert "hello" in recorded(store, journal_id)
    with pytest.raises(SessionException, match="does not exist"):
        repository.delete_session("s")


def test_messages_are_recorded_as_waybook_kinds_with_blocks() -> None:
    store = open_store("memory:")
    repository = WaybookSessionRepository(store)
    repository.create_session(Session(session_id="t", session_type=SessionType.AGENT))
    repository.create_agent("t", SessionAgent(agent_id="a", state={}, conversation_manager_state={}))
    use = {"toolUse": {"toolUseId": "u1", "name": "weather", "input": {"city": "Oslo"}}}
    result = {"toolResult": {"toolUseId": "u1", "content": [{"text": "snow"}], "status": "success"}}
    for i, message in enumerate(
        [
            {"role": "user", "content": [{"text": "weather?"}]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ]
    ):
        repository.create_message("t", "a", SessionMessage(message=message, message_id=i))  # type: ignore[arg-type]
    journal_id = repository.journal_ids("t", "a")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        nodes = [record.body for record in journal.read() if record.body.IS_NODE]
    assert [type(body) for body in nodes] == [UserMessage, AssistantMessage, ToolResult]
    assert nodes[1].content == (ToolCallBlock(call_id="u1", name="weather", arguments={"city": "Oslo"}),)  # type: ignore[union-attr]
