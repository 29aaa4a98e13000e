"""A store's journal names its own id in its header (docs/journal-contract.md, "The header names the
journal"). Every path that hands a store a ready-made header (a verbatim copy, `create(header=False)` and
an append, `create_sealed`'s lines) refuses one naming another journal before anything is written: on
today's main each of them stored journal "other" whose header said "golden". Data stored before the rule
still opens and reads.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.helpers.sessions import branching_session
from waybook import AsyncSession, Session
from waybook.journal import InMemoryJournal, SessionJournal
from waybook.model import GENESIS, Header
from waybook.stores import (
    CATALOG_ID,
    DirectoryStore,
    HeaderMismatchError,
    JournalStore,
    SealedJournal,
    StoreArgumentError,
    ThreadedStore,
    copy_records,
    open_store,
)


def golden() -> SessionJournal:
    """A checked journal whose header names "golden"."""
    return branching_session(InMemoryJournal("golden"))


def user_feed(store: JournalStore) -> list[tuple[str, int]]:
    return [(e.journal_id, e.seq) for e in store.feed() if e.journal_id != CATALOG_ID]


def test_a_copy_under_another_id_is_refused_before_any_record_is_written(url: str) -> None:
    with open_store(url) as store:
        target = store.create("other", header=False)
        with pytest.raises(HeaderMismatchError) as caught:
            copy_records(golden().read(), target)
        assert (caught.value.journal_id, caught.value.header_journal) == ("other", "golden")
        assert target.head() == GENESIS
        assert list(target.read_lines()) == []
        assert user_feed(store) == []
        target.close()
    with open_store(url) as store:  # (a memory: URL opens a new store: nothing to see there either)
        assert not store.exists("other") or store.open("other").head() == GENESIS


def test_the_refusal_names_both_ids_and_what_to_do(url: str) -> None:
    with (
        open_store(url) as store,
        store.create("other", header=False) as target,
        pytest.raises(StoreArgumentError) as caught,  # a caller's mistake, as a store says them
    ):
        copy_records(golden().read(), target)
    message = str(caught.value)
    assert "journal 'other' would start with a header naming journal 'golden'" in message
    assert "Create it as 'golden'" in message
    assert "waybook migrate --store URL golden --to other" in message
    assert message.endswith("nothing was written")


def test_a_copy_under_its_own_id_is_taken_byte_for_byte(url: str) -> None:
    source = golden()
    with open_store(url) as store, store.create("golden", header=False) as target:
        copy_records(source.read(), target)
        assert list(target.read_lines()) == list(source.read_lines())


def test_a_header_appended_after_a_refused_one_starts_the_journal(url: str) -> None:
    with open_store(url) as store, store.create("other", header=False) as target:
        with pytest.raises(HeaderMismatchError):
            copy_records(golden().read(), target)
        copy_records(branching_session(InMemoryJournal("other"), journal_id="other").read(), target)
        first = next(iter(target.read()))
    assert isinstance(first.body, Header)
    assert first.body.journal == "other"


def test_a_sealed_journal_naming_another_id_refuses_the_whole_batch_before_any_file_is_written(
    tmp_path: Path,
) -> None:
    source = golden()
    good = branching_session(InMemoryJournal("fine"), journal_id="fine")
    batch = [
        SealedJournal.of("fine", good.read_lines(), good.head()),
        SealedJournal.of("other", source.read_lines(), source.head()),
    ]
    with DirectoryStore(tmp_path / "s") as store:
        with pytest.raises(HeaderMismatchError, match="journal 'other' would start with a header naming"):
            store.create_sealed(batch)
        assert list((tmp_path / "s" / "journals").iterdir()) == []  # no file, no temp file
        assert [info.journal_id for info in store.list()] == []
        assert user_feed(store) == []
    with DirectoryStore(tmp_path / "s") as store:
        assert [info.journal_id for info in store.list()] == []


def test_a_directory_store_file_copied_under_another_name_still_opens_and_reads(tmp_path: Path) -> None:
    """Data stored before the rule (or a file renamed by hand) is read as it is: the rule is on writing."""
    source = golden()
    with DirectoryStore(tmp_path / "s") as store, store.create("golden", header=False) as journal:
        copy_records(source.read(), journal)
    journals = tmp_path / "s" / "journals"
    shutil.copyfile(journals / "golden.jsonl", journals / "renamed.jsonl")
    with open_store(f"file:{tmp_path / 's'}") as store:
        assert store.exists("renamed")  # an orphan, adopted
        with store.open("renamed") as journal:
            assert list(journal.read_lines()) == list(source.read_lines())
            first = next(iter(journal.read()))
    assert isinstance(first.body, Header)
    assert first.body.journal == "golden"


def test_a_session_created_on_an_empty_journal_of_a_store_names_its_id(url: str) -> None:
    with open_store(url) as store, store.create("s1", header=False) as journal:
        Session.create(journal).user("hi")  # main: a fresh random id, which no store should keep
        first = next(iter(journal.read()))
    assert isinstance(first.body, Header)
    assert first.body.journal == "s1"


def test_an_async_session_created_on_an_empty_journal_of_a_store_names_its_id(url: str) -> None:
    async def write() -> Header:
        with open_store(url) as store:
            journal = await ThreadedStore(store).create("s2", header=False)
            session = await AsyncSession.create(journal)
            await session.user("hi")
            records = [record async for record in journal.read()]
            first = records[0]
            await journal.close()
        assert isinstance(first.body, Header)
        return first.body

    assert asyncio.run(write()).journal == "s2"
