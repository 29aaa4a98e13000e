"""The store contract (docs/stores.md), run on every store in conftest.STORES."""

from __future__ import annotations

import threading
from collections import defaultdict

import pytest

from tests.stores.conftest import StoreKind
from waybook import Session
from waybook.codecs import line_digest
from waybook.journal import verify
from waybook.model import Header, JournalClosedError, Reset, UserMessage, text
from waybook.stores import (
    CATALOG_ID,
    FeedEntry,
    InvalidJournalIdError,
    JournalExistsError,
    JournalPurgedError,
    JournalStore,
    ReservedJournalError,
    StoreArgumentError,
    UnknownJournalError,
    open_store,
    tail,
)
from waybook.stores._copying import copy_records


def chat(store: JournalStore, journal_id: str, turns: int = 2, **create: object) -> Session:
    session = Session(store.create(journal_id, **create))  # type: ignore[arg-type]
    for i in range(turns):
        session.user(f"question {i}")
        session.assistant(f"answer {i}")
    return session


def user_entries(store: JournalStore, after: int = 0) -> list[FeedEntry]:
    return [e for e in store.feed(after) if e.journal_id != CATALOG_ID]


# --- create, open, exists -------------------------------------------------------------------------


def test_create_writes_a_header_declaring_the_id_role_and_metadata(store: JournalStore) -> None:
    journal = store.create("s1", role="working_memory", metadata={"user": "ada"})
    (first,) = journal.read()
    assert isinstance(first.body, Header)
    assert (first.body.journal, first.body.role, first.body.metadata) == (
        "s1",
        "working_memory",
        {"user": "ada"},
    )


def test_create_without_header_gives_an_empty_journal_for_a_verbatim_copy(store: JournalStore) -> None:
    with open_store("memory:") as elsewhere:
        source = chat(elsewhere, "copy")  # a verbatim copy keeps its id: its header names it
        source.append(UserMessage(parent=source.leaf, content=text("a")), Reset(reason="a batch of two"))
        copy = store.create("copy", header=False)
        copy_records(source.journal.read(), copy)
        assert list(copy.read_lines()) == list(source.journal.read_lines())


def test_an_existing_id_cannot_be_created_again(store: JournalStore) -> None:
    store.create("s1")
    with pytest.raises(JournalExistsError):
        store.create("s1")


@pytest.mark.parametrize("bad", ["", "../etc/passwd", "a/b", ".hidden", "x" * 129, "a b", "a\n"])
def test_a_journal_id_that_could_name_another_file_is_refused_before_anything_is_written(
    store: JournalStore, bad: str
) -> None:
    with pytest.raises(InvalidJournalIdError):
        store.create(bad)
    with pytest.raises(InvalidJournalIdError):
        store.open(bad)
    assert list(store.list()) == []


def test_the_catalog_is_the_stores_own(store: JournalStore) -> None:
    with pytest.raises(ReservedJournalError):
        store.create(CATALOG_ID)
    with pytest.raises(ReservedJournalError):
        store.open(CATALOG_ID)


def test_roles_are_checked_and_catalog_is_not_a_callers_role(store: JournalStore) -> None:
    with pytest.raises(StoreArgumentError):
        store.create("s1", role="diary")
    with pytest.raises(StoreArgumentError):
        store.create("s1", role="catalog")
    with pytest.raises(StoreArgumentError):
        store.create("s1", metadata={"when": object()})
    assert not store.exists("s1")


def test_opening_an_unknown_journal_is_a_typed_error(store: JournalStore) -> None:
    with pytest.raises(UnknownJournalError) as caught:
        store.open("nobody")
    assert caught.value.journal_id == "nobody"
    assert not store.exists("nobody")


def test_an_opened_journal_continues_where_its_creator_stopped(store: JournalStore) -> None:
    first = chat(store, "s1")
    again = Session(store.open("s1"))
    assert again.head == first.head
    again.user("more")
    assert store.exists("s1")


# --- listing --------------------------------------------------------------------------------------


def test_listing_is_in_creation_order_and_filters_by_role_and_metadata(store: JournalStore) -> None:
    store.create("b", metadata={"user": "ada"})
    store.create("a", role="working_memory", metadata={"user": "ada"})
    store.create("c", metadata={"user": "bob"})
    assert [i.journal_id for i in store.list()] == ["b", "a", "c"]
    assert [i.journal_id for i in store.list(role="session")] == ["b", "c"]
    assert [i.journal_id for i in store.list(metadata={"user": "ada"})] == ["b", "a"]
    assert [i.journal_id for i in store.list(role="session", metadata={"user": "ada"})] == ["b"]
    assert [i.journal_id for i in store.list(metadata={"user": "eve"})] == []


def test_pages_cover_every_journal_exactly_once(store: JournalStore) -> None:
    ids = [f"s{i:02}" for i in range(23)]
    for journal_id in ids:
        store.create(journal_id)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = store.list(after=cursor, limit=5)
        seen += [i.journal_id for i in page]
        pages += 1
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == ids
    assert pages == 5


def test_a_bad_cursor_or_limit_is_a_typed_error(store: JournalStore) -> None:
    with pytest.raises(StoreArgumentError):
        store.list(after="not-a-cursor")
    with pytest.raises(StoreArgumentError):
        store.list(limit=0)


def test_hiding_is_a_record_and_keeps_the_journal(store: JournalStore) -> None:
    chat(store, "s1")
    store.create("s2")
    record = store.hide("s1", reason="user archived it", actor="host")
    assert [i.journal_id for i in store.list()] == ["s2"]
    assert [(i.journal_id, i.hidden) for i in store.list(hidden=True)] == [("s1", True), ("s2", False)]
    assert store.open("s1").head().seq == 5
    catalog = [e.record for e in store.feed() if e.journal_id == CATALOG_ID]
    assert catalog[-1] == record


# --- the feed -------------------------------------------------------------------------------------


def test_the_feed_holds_every_committed_record_in_commit_order(store: JournalStore) -> None:
    a = Session(store.create("a"))
    b = Session(store.create("b"))
    a.user("a1")
    b.user("b1")
    a.assistant("a2")
    b.assistant("b2")
    entries = user_entries(store)
    assert [(e.journal_id, e.seq) for e in entries] == [
        ("a", 1),
        ("b", 1),
        ("a", 2),
        ("b", 2),
        ("a", 3),
        ("b", 3),
    ]
    positions = [e.position for e in store.feed()]
    assert positions == sorted(set(positions))
    assert store.feed_head() == positions[-1]


def test_feed_entries_are_the_stored_bytes_and_their_digests_hold(store: JournalStore) -> None:
    session = chat(store, "s1")
    lines = list(session.journal.read_lines())
    entries = user_entries(store)
    assert [e.line for e in entries] == lines
    assert all(line_digest(e.line) == e.record.digest for e in entries)


def test_reading_the_feed_after_a_position_resumes_exactly_there(store: JournalStore) -> None:
    chat(store, "a")
    chat(store, "b")
    everything = list(store.feed())
    for cut in range(len(everything) + 1):
        after = everything[cut - 1].position if cut else 0
        assert list(store.feed(after)) == everything[cut:]
        assert list(store.feed(after, limit=3)) == everything[cut : cut + 3]


def test_racing_writers_feed_each_record_once_in_each_journals_order(store: JournalStore) -> None:
    ids = [f"t{i}" for i in range(4)]
    for journal_id in ids:
        store.create(journal_id)
    barrier = threading.Barrier(8)

    def writer(journal_id: str, who: int) -> None:
        session = Session(store.open(journal_id))
        barrier.wait()
        for i in range(30):
            while True:
                try:
                    session.user(f"{who}:{i}")
                    break
                except Exception:
                    session.sync()

    threads = [threading.Thread(target=writer, args=(ids[w % 4], w)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    per_journal: dict[str, list[int]] = defaultdict(list)
    for entry in user_entries(store):
        per_journal[entry.journal_id].append(entry.seq)
    assert dict(per_journal) == {j: list(range(1, 62)) for j in ids}


def test_wait_wakes_when_another_thread_commits(store: JournalStore) -> None:
    session = Session(store.create("s1"))
    head = store.feed_head()
    assert store.wait(head, timeout=0.01) is False
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(store.wait(head, timeout=60)))
    waiter.start()
    session.user("wake up")
    waiter.join()
    assert woke == [True]


def test_tail_yields_what_is_committed_then_what_commits_next(store: JournalStore) -> None:
    session = Session(store.create("s1"))
    seen: list[FeedEntry] = []
    reader = tail(store, 0)

    def follow() -> None:
        for entry in reader:
            seen.append(entry)
            if entry.journal_id == "s1" and entry.seq == 3:
                return

    follower = threading.Thread(target=follow)
    follower.start()
    session.user("one")
    session.assistant("two")
    follower.join()
    assert [(e.journal_id, e.seq) for e in seen if e.journal_id == "s1"] == [("s1", 1), ("s1", 2), ("s1", 3)]


# --- purge ----------------------------------------------------------------------------------------


def test_purge_erases_the_journal_and_leaves_a_receipt_in_the_catalog(
    store: JournalStore, kind: StoreKind, url: str
) -> None:
    session = Session(store.create("s1"))
    session.user("my home address is 12 Secret Lane")
    chat(store, "s2")
    receipt = store.purge("s1", reason="right to be forgotten", actor="dpo")
    assert (receipt.journal_id, receipt.head, receipt.records, receipt.actor) == (
        "s1",
        session.head,
        2,
        "dpo",
    )
    assert not store.exists("s1")
    with pytest.raises(JournalPurgedError):
        store.open("s1")
    assert [i.journal_id for i in store.list(hidden=True)] == ["s2"]
    assert all(e.journal_id != "s1" for e in store.feed())
    assert all(b"Secret Lane" not in e.line for e in store.feed())
    last = [e for e in store.feed() if e.journal_id == CATALOG_ID][-1]
    assert last.seq == receipt.catalog_seq
    assert last.record.body.data["journal"] == "s1"  # type: ignore[union-attr]
    if kind.persistent:
        assert b"Secret Lane" not in stored_bytes(url)


def stored_bytes(url: str) -> bytes:
    """Every byte the store keeps on disk (files under a directory store, the database file and its
    write-ahead log for SQLite), to prove a purge left nothing behind."""
    from pathlib import Path

    location = Path(url.partition(":")[2])
    files = [p for p in location.parent.rglob("*") if p.is_file() and p.name.startswith(location.name)]
    files += [p for p in location.rglob("*") if p.is_file()] if location.is_dir() else []
    return b"".join(p.read_bytes() for p in files)


def test_a_purged_id_is_retired_and_purging_again_returns_the_same_receipt(store: JournalStore) -> None:
    chat(store, "s1")
    receipt = store.purge("s1", reason="erasure request")
    assert store.purge("s1", reason="again") == receipt
    with pytest.raises(JournalPurgedError):
        store.create("s1")


def test_purging_an_unknown_journal_is_a_typed_error(store: JournalStore) -> None:
    with pytest.raises(UnknownJournalError):
        store.purge("nobody", reason="x")
    with pytest.raises(StoreArgumentError):
        store.purge("nobody", reason=" ")


def test_a_handle_on_a_purged_journal_in_this_process_refuses_to_write(
    store: JournalStore, kind: StoreKind
) -> None:
    session = chat(store, "s1")
    store.purge("s1", reason="erasure")
    if kind.name == "memory":
        with pytest.raises(JournalClosedError):
            session.user("after purge")


def test_the_catalog_verifies_like_any_journal(store: JournalStore) -> None:
    chat(store, "s1")
    store.hide("s1", reason="archived")
    store.purge("s1", reason="erasure")
    catalog = [e.line for e in store.feed() if e.journal_id == CATALOG_ID]
    from waybook.journal import InMemoryJournal

    assert verify(InMemoryJournal.from_lines(catalog)).ok


# --- reopening ------------------------------------------------------------------------------------


def test_a_reopened_store_has_the_same_journals_catalog_and_feed(kind: StoreKind, url: str) -> None:
    if not kind.persistent:
        pytest.skip("this store lives in one process")
    with open_store(url) as store:
        chat(store, "a", metadata={"k": 1})
        chat(store, "b")
        store.hide("b", reason="archived")
        listing = store.list(hidden=True)
        feed = list(store.feed())
    with open_store(url) as again:
        assert again.list(hidden=True) == listing
        assert list(again.feed()) == feed
        Session(again.open("a")).user("after reopen")
        assert [e.journal_id for e in again.feed(feed[-1].position)] == ["a"]


def test_a_purge_by_another_store_object_hides_the_journal_from_this_ones_feed(
    kind: StoreKind, url: str
) -> None:
    if not kind.persistent:
        pytest.skip("this store lives in one process")
    with open_store(url) as reader, open_store(url) as purger:
        Session(reader.create("s1")).user("to be forgotten")
        assert any(e.journal_id == "s1" for e in reader.feed())  # the reader now holds s1 open
        purger.purge("s1", reason="erasure")
        assert all(e.journal_id != "s1" for e in reader.feed())
        assert not reader.exists("s1")


def test_threads_creating_hiding_and_listing_at_once_agree_with_the_catalog(store: JournalStore) -> None:
    ids = [f"j{i}" for i in range(24)]
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def work(share: list[str]) -> None:
        try:
            barrier.wait()
            for journal_id in share:
                store.create(journal_id).close()
                store.hide(journal_id, reason="tidy")
                store.list(hidden=True, limit=1000)
        except BaseException as exc:  # reported below, with the thread that failed
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(ids[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    listed = store.list(hidden=True, limit=1000)
    assert sorted(i.journal_id for i in listed) == sorted(ids)
    assert all(i.hidden for i in listed)
    assert list(store.list()) == []


def test_positions_are_never_reused_after_purging_the_latest_records(store: JournalStore) -> None:
    chat(store, "keep", turns=1)
    chat(store, "gone", turns=2)
    head = store.feed_head()
    store.purge("gone", reason="erasure")
    assert store.feed_head() >= head
    Session(store.open("keep")).user("after the purge")
    newest = list(store.feed(head))
    assert newest
    assert all(e.position > head for e in newest)
    assert [(e.journal_id, e.seq) for e in newest if e.journal_id == "keep"] == [("keep", 4)]


@pytest.mark.parametrize(("after", "limit"), [(-1, None), ("3", None), (0, -2), (0, "all")])
def test_a_bad_feed_position_or_limit_is_refused_when_asked(
    store: JournalStore, after: object, limit: object
) -> None:
    with pytest.raises(StoreArgumentError):
        store.feed(after, limit=limit)  # type: ignore[arg-type]


def test_a_listing_is_the_callers_to_change(store: JournalStore) -> None:
    store.create("s1", metadata={"user": "ada"})
    (info,) = store.list()
    info.metadata["user"] = "mallory"
    assert [i.metadata for i in store.list()] == [{"user": "ada"}]
