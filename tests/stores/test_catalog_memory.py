"""What a store keeps in memory per journal it lists (issue 50: a whole home in one import).

A Codex rollout's header carries the agent's base instructions (about 21 KB, the same text in every
rollout of one Codex version), and the store's catalog keeps each journal's metadata to list and filter
by it: held once per journal, a home of 1,000 rollouts grew an import by about 45 MB. The catalog now
holds one copy of each long text, whatever the number of journals that carry it.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from waybook.stores import DirectoryStore, JournalInfo
from waybook.stores._store_index import IndexState, IndexTail, write_index

INSTRUCTIONS = "You are a coding agent. " * 900  # ~21 KB, as Codex's base instructions
JOURNALS = 40


def metadata() -> dict[str, object]:
    """A rollout's metadata, its text a fresh copy each time (as each decoded header gives)."""
    return {"codex": {"base_instructions": {"text": "".join(INSTRUCTIONS)}, "cli_version": "0.1"}}


def traced_growth(store: DirectoryStore, ids: list[str]) -> int:
    """Bytes still allocated after creating (and closing) the journals `ids` in `store`."""
    gc.collect()
    before, _ = tracemalloc.get_traced_memory()
    for journal_id in ids:
        store.create(journal_id, metadata=metadata()).close()
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    return after - before


def test_the_catalog_holds_a_long_metadata_text_once_whatever_the_journals_that_carry_it(
    tmp_path: Path,
) -> None:
    tracemalloc.start()
    try:
        with DirectoryStore(tmp_path / "store") as store:
            traced_growth(store, [f"warm-{i}" for i in range(8)])  # (caches and first allocations)
            grown = traced_growth(store, [f"rollout-{i}" for i in range(JOURNALS)])
    finally:
        tracemalloc.stop()
    assert grown < JOURNALS * len(INSTRUCTIONS) // 4, f"{grown / JOURNALS:.0f} bytes kept per journal"


def test_journals_listed_with_a_shared_text_show_their_own_metadata(tmp_path: Path) -> None:
    with DirectoryStore(tmp_path / "store") as store:
        for journal_id in ("a", "b"):
            store.create(journal_id, metadata=metadata()).close()
        listed = {info.journal_id: info.metadata for info in store.list()}
    listed["a"]["codex"]["cli_version"] = "changed by the caller"
    assert listed["b"] == metadata()
    with DirectoryStore(tmp_path / "store") as store:
        assert {info.journal_id: info.metadata for info in store.list()}["a"] == metadata()


def test_the_store_index_is_written_a_journal_at_a_time(tmp_path: Path) -> None:
    """Closing the store writes its index: every journal's row, its metadata as JSON. Built as one list,
    the rows of 1,000 rollouts peaked 24 MB over the import."""
    journals = [
        (JournalInfo(f"j{i}", "session", {"text": f"{i} {INSTRUCTIONS}"}, i + 1, "2026-12-06T00:00Z"), None)
        for i in range(JOURNALS)
    ]
    state = IndexState(JOURNALS, "0" * 64, 0, 0, "", 0, 0, JOURNALS, 0)
    tail = IndexTail(journals=journals, gone=[], purged=[], fed=[], state=state)
    tracemalloc.start()
    try:
        assert write_index(tmp_path / "store.index", tail)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < JOURNALS * len(INSTRUCTIONS) // 4, f"the write peaked at {peak} bytes"
