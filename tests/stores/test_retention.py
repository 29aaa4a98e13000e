"""Retention with a fake clock (docs/erasure.md, "Retention"): what is older than the cut is forgotten,
with a receipt for each action; what is younger stays; role and metadata select the journals; a dry run
writes nothing; a second run is a no-op; the store's own policy is applied when none is given."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable

import pytest

from waybook import Session
from waybook.journal import erasure_receipt, verify
from waybook.model import GENESIS, Header, NewRecord
from waybook.stores import (
    JournalStore,
    RetentionPolicy,
    StoreArgumentError,
    open_store,
    parse_duration,
    retain,
    retention_policy,
    set_retention_policy,
)

NOW = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
OLD = "2030-01-10"  # 142 days before NOW
YOUNG = "2030-05-28"  # 4 days before NOW
NINETY_DAYS = parse_duration("90d")


def clock_at(day: str) -> Callable[[], str]:
    ticks = itertools.count()
    return lambda: f"{day}T09:00:{next(ticks):02d}.000Z"


def chat(store: JournalStore, journal_id: str, days: list[str], **metadata: str) -> list[int]:
    """A journal whose turns were written on `days` (one user and one assistant record each); returns
    the seqs of the records written on the first day."""
    journal = store.create(journal_id, metadata=metadata)
    seqs: list[int] = []
    try:
        for day in days:
            session = Session(journal, clock=clock_at(day))  # type: ignore[arg-type]
            asked = session.user(f"{journal_id} secret of {day}")
            answered = session.assistant(f"{journal_id} answer of {day}")
            if day == days[0]:
                seqs += [asked.seq, answered.seq]
    finally:
        journal.close()
    return seqs


def texts(store: JournalStore, journal_id: str) -> list[str]:
    with store.open(journal_id) as journal:
        return [
            block.text  # type: ignore[union-attr]
            for record in journal.read()
            for block in getattr(record.body, "content", ())
        ]


def test_content_older_than_the_cut_is_erased_with_a_receipt_and_younger_content_stays(
    store: JournalStore,
) -> None:
    old = chat(store, "mixed", [OLD, YOUNG])
    chat(store, "young", [YOUNG])
    report = retain(store, RetentionPolicy(older_than=NINETY_DAYS), now=NOW)
    (receipt,) = report.erased
    assert receipt.journal == "mixed"
    assert [entry.seq for entry in receipt.erased] == old
    assert receipt.policy == "retain-90d"
    assert texts(store, "mixed") == [f"mixed secret of {YOUNG}", f"mixed answer of {YOUNG}"]
    assert texts(store, "young") == [f"young secret of {YOUNG}", f"young answer of {YOUNG}"]
    with store.open("mixed") as journal:
        assert verify(journal).ok
        assert erasure_receipt(journal, receipt.erasures[0].seq) == receipt
    assert report.cut == "2030-03-03T12:00:00.000Z"


def test_a_second_run_with_the_same_clock_writes_nothing(store: JournalStore) -> None:
    chat(store, "mixed", [OLD, YOUNG])
    policy = RetentionPolicy(older_than=NINETY_DAYS)
    assert retain(store, policy, now=NOW).changed
    head = store.open("mixed").head()
    feed = store.feed_head()
    again = retain(store, policy, now=NOW)
    assert not again.changed
    assert again.planned == ()
    assert store.open("mixed").head() == head
    assert store.feed_head() == feed


def test_a_dry_run_names_what_would_go_and_writes_nothing(store: JournalStore) -> None:
    old = chat(store, "mixed", [OLD, YOUNG])
    chat(store, "stale", [OLD])
    feed = store.feed_head()
    report = retain(store, RetentionPolicy(older_than=NINETY_DAYS), now=NOW, dry_run=True)
    assert report.dry_run
    assert not report.changed
    assert dict(report.planned)["mixed"] == tuple(old)
    assert store.feed_head() == feed
    assert texts(store, "mixed")[0] == f"mixed secret of {OLD}"
    purge = retain(store, RetentionPolicy(older_than=NINETY_DAYS, action="purge"), now=NOW, dry_run=True)
    assert [journal for journal, _ in purge.planned] == ["stale"]
    assert store.exists("stale")
    assert store.feed_head() == feed


def test_purge_takes_whole_journals_whose_last_record_is_older_than_the_cut(store: JournalStore) -> None:
    chat(store, "stale", [OLD])
    chat(store, "mixed", [OLD, YOUNG])
    report = retain(store, RetentionPolicy(older_than=NINETY_DAYS, action="purge"), now=NOW, actor="cron")
    (receipt,) = report.purged
    assert (receipt.journal_id, receipt.actor) == ("stale", "cron")
    assert "retain-90d" in receipt.reason
    assert not store.exists("stale")
    assert store.exists("mixed")
    assert texts(store, "mixed")[0] == f"mixed secret of {OLD}"
    assert not retain(store, RetentionPolicy(older_than=NINETY_DAYS, action="purge"), now=NOW).changed


def test_role_and_metadata_choose_the_journals(store: JournalStore) -> None:
    chat(store, "team-a", [OLD], team="a")
    chat(store, "team-b", [OLD], team="b")
    memory = store.create("notes", role="working_memory")
    memory.close()
    policy = RetentionPolicy(older_than=NINETY_DAYS, role="session", metadata={"team": "b"})
    report = retain(store, policy, now=NOW)
    assert [receipt.journal for receipt in report.erased] == ["team-b"]
    assert texts(store, "team-a")[0] == f"team-a secret of {OLD}"
    purged = retain(
        store, RetentionPolicy(older_than=NINETY_DAYS, action="purge", role="working_memory"), now=NOW
    )
    assert [receipt.journal_id for receipt in purged.purged] == ["notes"]  # its header is from today
    assert store.exists("team-a")
    assert store.exists("team-b")


def test_the_store_keeps_a_policy_that_retain_applies_when_given_none(store: JournalStore) -> None:
    chat(store, "mixed", [OLD, YOUNG])
    with pytest.raises(StoreArgumentError, match="no retention policy"):
        retain(store, None, now=NOW)
    policy = RetentionPolicy(older_than=NINETY_DAYS, name="gdpr-90d", role="session")
    set_retention_policy(store, policy, actor="privacy-desk")
    assert retention_policy(store) == policy
    (receipt,) = retain(store, None, now=NOW).erased
    assert receipt.policy == "gdpr-90d"
    set_retention_policy(store, None)
    assert retention_policy(store) is None


def test_a_journal_written_before_sealing_is_skipped_and_named(store: JournalStore) -> None:
    journal = store.create("legacy", header=False)
    try:
        header = Header(journal="legacy", creator="waybook", metadata={}, role="session")  # schema 1
        journal.append([NewRecord(id="h", at=f"{OLD}T08:00:00.000Z", body=header)], expected=GENESIS)
        Session(journal, clock=clock_at(OLD)).user("legacy secret")  # type: ignore[arg-type]
    finally:
        journal.close()
    report = retain(store, RetentionPolicy(older_than=NINETY_DAYS), now=NOW)
    assert report.erased == ()
    ((journal_id, why),) = report.skipped
    assert journal_id == "legacy"
    assert "waybook migrate" in why
    assert texts(store, "legacy") == ["legacy secret"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90d", 90 * 86400), ("12h", 43200), ("1w2d", 9 * 86400), ("45s", 45)]
)
def test_durations_read_as_seconds(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "90", "d", "-1d", "0d", "1y", "ninety days", "9" * 5000 + "d", "1" + "0" * 15 + "s"]
)
def test_a_duration_retention_cannot_read_is_refused_with_examples(text: str) -> None:
    with pytest.raises(StoreArgumentError, match=r"e\.g\. 90d"):
        parse_duration(text)


def test_blob_collection_follows_and_no_longer_counts_what_only_erased_content_referenced(
    store: JournalStore,
) -> None:
    journal = store.create("big")
    try:
        session = Session(journal, clock=clock_at(OLD), blobs=store.blobs, inline_limit=64)  # type: ignore[arg-type]
        session.user("x" * 200)  # over the inline limit: kept as a blob the record references
    finally:
        journal.close()
    assert store.blobs.collect(grace=0).referenced == 1
    report = retain(store, RetentionPolicy(older_than=NINETY_DAYS), now=NOW, grace=0)
    assert report.collected is not None
    assert report.collected.referenced == 0  # gone once its lease runs out (docs/blobs.md)


@pytest.mark.parametrize(
    "options",
    [
        {"older_than": 0},
        {"older_than": "90d"},
        {"older_than": 60, "action": "delete"},
        {"older_than": 60, "role": "catalog"},
        {"older_than": 60, "metadata": ["team"]},
        {"older_than": 60, "name": " "},
        {"older_than": 60, "name": 7},
    ],
    ids=lambda options: "-".join(f"{k}={v}" for k, v in options.items()),
)
def test_a_policy_that_is_not_one_is_refused_before_anything_is_read(options: dict[str, object]) -> None:
    with pytest.raises(StoreArgumentError):
        RetentionPolicy(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize("grace", [float("inf"), float("nan"), -1.0, "3600"])
def test_a_grace_that_cannot_be_recorded_is_refused_before_anything_is_erased(
    store: JournalStore, grace: object
) -> None:
    """An infinite grace erased every old journal, then failed to record the blob collection (JSON has no
    infinity): the receipts were lost with the exception."""
    chat(store, "old", [OLD])
    with pytest.raises(StoreArgumentError, match="grace"):
        retain(store, RetentionPolicy(older_than=NINETY_DAYS), now=NOW, grace=grace)  # type: ignore[arg-type]
    assert "old secret of 2030-01-10" in texts(store, "old")


def test_a_policy_without_a_name_is_named_for_its_duration() -> None:
    assert RetentionPolicy(older_than=parse_duration("36h"), name=None).name == "retain-1d12h"  # type: ignore[arg-type]


class PurgedWhenOpened:
    """`store`, as another process changes it: the first time retention opens `victim` (after listing
    it), another handle on the same store purges it first. The injection is the store's, at the one
    moment between retention's read of the listing and its open; retention runs unchanged."""

    def __init__(self, store: JournalStore, other: JournalStore, victim: str) -> None:
        self._store, self._other, self._victim = store, other, victim

    def open(self, journal_id: str) -> object:
        if journal_id == self._victim and self._other.exists(journal_id):
            self._other.purge(journal_id, reason="another operator")
        return self._store.open(journal_id)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


def test_a_journal_purged_while_retention_runs_is_noted_and_the_others_are_retained(
    store: JournalStore, url: str
) -> None:
    """Retention listed the journals, then met JournalPurgedError opening one another process had
    purged meanwhile: it stopped there, the receipts of the journals before it lost."""
    if url.startswith("memory:"):
        pytest.skip("memory: opens a new store each time: no other handle on the same store")
    for journal_id in ("a", "b", "c"):
        chat(store, journal_id, [OLD])
    with open_store(url) as other:
        racing = PurgedWhenOpened(store, other, "b")
        report = retain(racing, RetentionPolicy(older_than=NINETY_DAYS), now=NOW)  # type: ignore[arg-type]
    assert [receipt.journal for receipt in report.erased] == ["a", "c"]
    assert [journal for journal, _ in report.skipped] == ["b"]
    assert "purged" in dict(report.skipped)["b"]
