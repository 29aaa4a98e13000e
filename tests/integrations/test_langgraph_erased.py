"""Issue 46 for LangGraph threads saved by `WaybookSaver` (docs/langgraph.md, "Erasing a thread's
content"). A saved thread holds each message twice: as a session node (what `show`, the viewer, search
and exports read, and what `erase` empties) and inside the checkpoint records' channel values (`[serde
type, base64 bytes]`, what the saver gives back to the graph, so to the model). Found by the red team:
erasing the node leaves the copy (NOT fixed: a strict xfail, so that a fix shows; the documented way to
forget a thread is to purge it), and a checkpoint built on an erased checkpoint record cannot be rebuilt
(a typed error naming the erasure, no longer a misleading integrity error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from tests.helpers.erased_sessions import REASON
from tests.helpers.langgraph_threads import generator
from waybook.integrations.langgraph import ErasedCheckpointError, WaybookSaver
from waybook.integrations.langgraph._state import CHECKPOINT
from waybook.journal import erase, verify
from waybook.model import CustomEntry, UserMessage, plain_text
from waybook.stores import open_store

QUESTION = "second vault-secret-4f1a?"
CONFIG: Any = {"configurable": {"thread_id": "support-chat"}}


def thread(tmp_path: Path) -> tuple[str, str]:
    url = f"file:{tmp_path}/store"
    with WaybookSaver(open_store(url)) as saver:
        generator().run_thread(saver, ("first?", QUESTION, "third?"))
        journal_id = saver.journal_id("support-chat")
    assert journal_id is not None
    return url, journal_id


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the checkpoints' channel values still hold an erased message node's text (base64), and the "
    "saver gives it back to the graph: erase would have to take the checkpoint records too",
)
def test_an_erased_message_node_is_not_given_back_to_the_graph(tmp_path: Path) -> None:
    url, journal_id = thread(tmp_path)
    store = open_store(url)
    with store.open(journal_id) as journal:
        (seq,) = [
            r.seq
            for r in journal.read()
            if isinstance(r.body, UserMessage) and plain_text(r.body.content) == QUESTION
        ]
        erase(journal, [seq], reason=REASON)
        assert verify(journal).ok
    with WaybookSaver(open_store(url)) as saver:
        latest = saver.get_tuple(CONFIG)
    assert latest is not None
    said = [m.content for m in latest.checkpoint["channel_values"]["messages"]]
    assert QUESTION not in said


def test_a_checkpoint_built_on_an_erased_checkpoint_is_refused_with_a_typed_error_naming_the_erasure(
    tmp_path: Path,
) -> None:
    """An erased checkpoint record (as `waybook retain --erase-content` erases every old record) leaves
    every later checkpoint that extends its values unable to rebuild them: a typed error naming the
    erasure and what to do, where it once said the journal was not one this saver wrote."""
    url, journal_id = thread(tmp_path)
    store = open_store(url)
    with store.open(journal_id) as journal:
        checkpoints = [
            r.seq for r in journal.read() if isinstance(r.body, CustomEntry) and r.body.type == CHECKPOINT
        ]
        receipt = erase(journal, checkpoints[3:4], reason=REASON)
        assert verify(journal).ok
    with WaybookSaver(open_store(url)) as saver, pytest.raises(ErasedCheckpointError) as refused:
        saver.get_tuple(CONFIG)
    assert refused.value.record_seq == checkpoints[3]
    assert refused.value.erasure_seq == receipt.erasures[0].seq
    assert refused.value.channel == "messages"
    message = str(refused.value)
    assert f"erasure #{receipt.erasures[0].seq}" in message
    assert "waybook purge --store URL JOURNAL" in message
    assert "not one this saver wrote" not in message
