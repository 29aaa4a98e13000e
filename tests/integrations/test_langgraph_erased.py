"""Issue 46 for LangGraph threads saved by `WaybookSaver`: found by the red team, NOT fixed (strict xfail,
so each turns into a failure to notice when it is fixed). A saved thread holds each message twice: as a
session node (what `show`, the viewer, search and exports read, and what `erase` empties) and inside the
checkpoint records' channel values (`[serde type, base64 bytes]`, what the saver gives back to the
graph, so to the model). docs/erasure.md's caveat on `details` copying content does not name them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from tests.helpers.erased_sessions import REASON
from tests.helpers.langgraph_threads import generator
from waybook.integrations.langgraph import WaybookSaver
from waybook.integrations.langgraph._state import CHECKPOINT
from waybook.journal import erase, verify
from waybook.model import CustomEntry, IntegrityError, UserMessage, plain_text
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


@pytest.mark.xfail(
    strict=True,
    raises=IntegrityError,
    reason="an erased checkpoint record (as `waybook retain --erase-content` erases every old record) makes "
    "every later checkpoint that extends its values unloadable: IntegrityError 'not one this saver wrote'",
)
def test_a_thread_whose_old_checkpoint_was_erased_still_loads_its_latest_checkpoint(tmp_path: Path) -> None:
    url, journal_id = thread(tmp_path)
    store = open_store(url)
    with store.open(journal_id) as journal:
        checkpoints = [
            r.seq for r in journal.read() if isinstance(r.body, CustomEntry) and r.body.type == CHECKPOINT
        ]
        erase(journal, checkpoints[3:4], reason=REASON)
    with WaybookSaver(open_store(url)) as saver:
        assert saver.get_tuple(CONFIG) is not None
