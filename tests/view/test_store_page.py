"""A page of a journal in a store also shows what its records only reference: blobs and memory files."""

from __future__ import annotations

import json
import re
from pathlib import Path

from waybook import Session
from waybook.cli import main
from waybook.memory import Create, Memory
from waybook.memory.tools._index import load_index
from waybook.stores import open_store


def page_data_of(page: Path) -> dict[str, object]:
    found = re.search(r'id="waybook-data">(.*?)</script>', page.read_text(), re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_a_store_page_shows_blob_text_and_the_memory_files_the_turn_used(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        notes = store.create("notes", role="working_memory", metadata={"scope": "agent"})
        memory = Memory(notes, scope="agent")
        memory.execute(Create("/memories/user.md", "---\ndescription: who\n---\nprefers tabs"))
        session = Session.create(
            store.create("chat", role="session"), journal_id="chat", blobs=store.blobs, inline_limit=1024
        )
        session.user("show me the log")
        load_index(lambda: store.open("notes"), policy="require", session=session)
        session.assistant("here it is: " + "line of the log\n" * 200)
    out = tmp_path / "chat.html"
    assert main(["view", "--store", url, "chat", "-o", str(out)]) == 0
    data = page_data_of(out)
    texts = [b for n in data["nodes"] for b in n["blocks"] if b["type"] == "text"]  # type: ignore[index]
    assert any("line of the log" in b["text"] and b.get("blob") for b in texts)  # the blob's own bytes
    (used,) = [m for entries in data["memory"].values() for m in entries]  # type: ignore[union-attr]
    assert used["memory"] == "notes"
    assert [f["path"] for f in used["files"]] == ["/memories/user.md"]
    assert all(n.get("latency") is not None for n in data["nodes"] if n["role"] == "assistant")  # type: ignore[index]
