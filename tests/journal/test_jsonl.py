"""The JSONL adapter beyond the shared contract: files, processes, durability, damage and repair."""

from __future__ import annotations

import errno
import fcntl
import os
import random
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.builders import chat, header, move, reset, user
from tests.helpers.faults import CountingFileOps, CrashableFileOps, FailingFsyncOps
from waybook import Session
from waybook.journal import JsonlJournal, verify, verify_file
from waybook.journal._id_index import COMPACT_ABOVE, CompactIdIndex, DictIdIndex
from waybook.journal._jsonl._group_commit import GroupCommit
from waybook.model import (
    GENESIS,
    CorruptJournalError,
    DuplicateIdError,
    DurabilityError,
    Head,
    InvalidLeafMoveError,
    JournalFailedError,
    LockUnsupportedError,
    StaleWriterError,
    StorageError,
    TornTailError,
)


def make_file(path: Path, nodes: int = 4, **options: object) -> JsonlJournal:
    """A journal of a header and `nodes` messages, each appended alone (one record per append)."""
    journal = JsonlJournal(path, **options)  # type: ignore[arg-type]
    head = journal.append([header()], expected=GENESIS).head
    for record in chat(nodes):
        head = journal.append([record], expected=head).head
    return journal


def line_offsets(path: Path) -> list[int]:
    data = path.read_bytes()
    offsets, pos = [], 0
    for line in data.splitlines(keepends=True):
        offsets.append(pos)
        pos += len(line)
    return offsets


def line_end(path: Path, seq: int) -> int:
    """The byte offset just past record `seq`'s newline."""
    return sum(len(line) for line in path.read_bytes().splitlines(keepends=True)[:seq])


# --- files ----------------------------------------------------------------------------------------


def test_the_journal_file_is_created_private_and_alone(tmp_path: Path) -> None:
    make_file(tmp_path / "s.jsonl").close()
    assert (tmp_path / "s.jsonl").stat().st_mode & 0o777 == 0o600
    # no side lock file; the only other file is the reopen checkpoint (a cache), private too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "s.jsonl.checkpoint"]
    assert (tmp_path / "s.jsonl.checkpoint").stat().st_mode & 0o777 == 0o600
    make_file(tmp_path / "t.jsonl", sidecar=False).close()
    assert not (tmp_path / "t.jsonl.checkpoint").exists()


def test_each_line_is_the_canonical_record_and_a_newline(tmp_path: Path) -> None:
    with make_file(tmp_path / "s.jsonl") as journal:
        assert (tmp_path / "s.jsonl").read_bytes() == b"".join(line + b"\n" for line in journal.read_lines())


def test_create_writes_the_header_atomically_and_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    with JsonlJournal.create(path, journal_id="j1", metadata={"agent": "x"}) as journal:
        (record,) = list(journal.read())
        assert record.body.journal == "j1"  # type: ignore[union-attr]
    assert not list(tmp_path.glob(".new.jsonl.*.tmp")), "the temp file is gone"
    with pytest.raises(StorageError, match="already exists"):
        JsonlJournal.create(path, journal_id="j2")


def test_opening_a_missing_file_without_create_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="no such journal"):
        JsonlJournal(tmp_path / "missing.jsonl", create=False)


def test_a_symlinked_journal_is_refused(tmp_path: Path) -> None:
    make_file(tmp_path / "real.jsonl").close()
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    with pytest.raises(StorageError):
        JsonlJournal(tmp_path / "link.jsonl")


def test_lineage_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        first = session.user("q")
        session.assistant("a1")
        session.branch_from(first.id, reason="retry")
        session.assistant("a2")
        head, leaf = session.head, session.leaf
    with JsonlJournal(path) as journal:
        again = Session(journal)
        assert (again.head, again.leaf) == (head, leaf)
        assert verify(journal).ok


@pytest.mark.parametrize("reopen", [False, True], ids=["written", "reopened"])
def test_the_rules_hold_for_ids_far_back_in_a_large_file(tmp_path: Path, reopen: bool) -> None:
    """Past COMPACT_ABOVE records the ids move from a dict to the compact index, whose buckets answer by
    reading records back: the uniqueness and known-node rules must hold the same there."""
    path = tmp_path / "s.jsonl"
    journal = JsonlJournal(path)
    head = journal.append([header()], expected=GENESIS).head
    n = COMPACT_ABOVE + 1000
    nodes = [user(f"m{i}", f"m{i - 1}" if i else None) for i in range(n)]
    for start in range(0, n, 2000):
        head = journal.append(nodes[start : start + 2000], expected=head).head
    if reopen:
        journal.close()
        journal = JsonlJournal(path, create=False)
    with journal:
        assert isinstance(journal._ledger.rules.ids, CompactIdIndex)
        last = f"m{n - 1}"
        with pytest.raises(DuplicateIdError):
            journal.append([user("m17", last)], expected=head)
        with pytest.raises(InvalidLeafMoveError):
            journal.append([move("mv", last, "h")], expected=head)  # the header is not a node
        with pytest.raises(InvalidLeafMoveError):
            journal.append([move("mv", last, "nowhere")], expected=head)
        head = journal.append([move("mv", last, "m17")], expected=head).head
        head = journal.append([user("again", "m17")], expected=head).head
        assert journal.head().seq == n + 3
        journal.check_invariants()


def test_a_small_journal_keeps_its_ids_in_a_dict(tmp_path: Path) -> None:
    with make_file(tmp_path / "s.jsonl", nodes=50) as journal:
        assert isinstance(journal._ledger.rules.ids, DictIdIndex)
        journal.check_invariants()


# --- several writers and readers ------------------------------------------------------------------


def test_a_second_journal_object_sees_new_records_on_its_next_call(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with make_file(path) as writer, JsonlJournal(path) as reader:
        assert reader.head() == writer.head()
        result = writer.append([user("late", "m3")], expected=writer.head())
        assert reader.head() == result.head
        assert [r.id for r in reader.read(after=result.prior.seq)] == ["late"]


def test_read_after_seeks_by_offset_and_never_rescans_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path, nodes=40).close()
    ops = CountingFileOps()
    with JsonlJournal(path, file_ops=ops) as journal:
        ops.reads.clear()
        records = list(journal.read(after=30, limit=5))
        assert [r.seq for r in records] == [31, 32, 33, 34, 35]
        assert min(ops.reads) == line_offsets(path)[29]  # record 30: the anchor its proof starts from


def test_a_stale_writer_in_another_object_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with make_file(path) as one, JsonlJournal(path) as two:
        seen = two.head()
        one.append([user("x", "m3")], expected=one.head())
        before = path.read_bytes()
        with pytest.raises(Exception, match="stale writer"):
            two.append([user("y", "m3")], expected=seen)
        assert path.read_bytes() == before


def test_locking_that_the_filesystem_refuses_is_a_typed_error_not_a_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = make_file(tmp_path / "s.jsonl")

    def refuse(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    with pytest.raises(LockUnsupportedError):
        journal.append([user("x", "m3")], expected=journal.head())


# --- durability policies --------------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "syncs_per_append"), [("none", 0), ("flush", 0), ("fsync", 1)])
def test_each_policy_syncs_as_documented(tmp_path: Path, policy: str, syncs_per_append: int) -> None:
    ops = CountingFileOps()
    journal = make_file(tmp_path / "s.jsonl", nodes=0, durability=policy, file_ops=ops)
    before = ops.fsyncs
    head = journal.head()
    for i in range(10):
        head = journal.append([user(f"u{i}", None if i == 0 else f"u{i - 1}")], expected=head).head
    assert ops.fsyncs - before == 10 * syncs_per_append
    journal.flush()
    journal.close()
    expected_at_close = {"none": 0, "flush": 1, "fsync": 0}[policy]  # close after flush: nothing new
    assert ops.fsyncs - before - 10 * syncs_per_append == expected_at_close


def test_group_commit_shares_fsyncs_and_every_append_returns_durable(tmp_path: Path) -> None:
    ops = CrashableFileOps(tmp_path / "s.jsonl")
    journal = make_file(tmp_path / "s.jsonl", nodes=0, durability="group", file_ops=ops)
    durable_at_return: list[bool] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        for i in range(50):
            while True:
                try:
                    result = journal.append([reset(f"w{w}-{i}")], expected=journal.head())
                except StaleWriterError:
                    continue
                end = line_end(tmp_path / "s.jsonl", result.head.seq)
                with lock:
                    durable_at_return.append(ops.durable >= end)
                break

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(durable_at_return) == 200
    assert all(durable_at_return)
    assert journal._group.fsyncs < 200


def test_a_group_fsync_leader_waits_for_the_company_the_last_fsync_had() -> None:
    synced: list[int] = []
    group = GroupCommit(lambda: synced.append(group._written), name="g", window=60.0)
    for end in (10, 20, 30):  # three writers released together by one fsync
        group.written(end)
    group.wait_durable(30)
    assert synced == [30]

    leader = threading.Thread(target=group.wait_durable, args=(40,))
    group.written(40)
    leader.start()
    deadline = time.monotonic() + 30
    while not group._syncing and leader.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)  # until the leader holds the turn, waiting for two more appends
    group.written(50)
    group.written(60)
    leader.join(timeout=30)
    group.wait_durable(60)
    assert not leader.is_alive()
    assert synced == [30, 60], "all three appends shared the leader's fsync"
    assert (group.fsyncs, group.synced_appends) == (2, 6)


def test_a_lone_group_writer_never_waits_for_company() -> None:
    group = GroupCommit(lambda: None, name="g", window=60.0)
    writer = threading.Thread(
        target=lambda: [group.written(i) or group.wait_durable(i) for i in range(1, 51)]
    )
    writer.start()
    writer.join(timeout=30)  # waiting for company even once would take the 60 s window
    assert not writer.is_alive()
    assert group.fsyncs == 50


def test_a_leader_interrupted_while_waiting_for_company_hands_the_turn_back() -> None:
    group = GroupCommit(lambda: None, name="g", window=60.0)

    def interrupted() -> None:
        raise KeyboardInterrupt

    group._gather = interrupted  # type: ignore[method-assign]
    group.written(10)
    with pytest.raises(KeyboardInterrupt):
        group.wait_durable(10)
    del group._gather  # the next leader waits normally (a lone writer: no wait at all)
    retry = threading.Thread(target=group.wait_durable, args=(10,), daemon=True)
    retry.start()
    retry.join(timeout=30)
    assert not retry.is_alive(), "the turn was never handed back"
    assert group.fsyncs == 1


def test_group_window_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="group_window"):
        GroupCommit(lambda: None, name="g", window=-1.0)


@pytest.mark.parametrize("policy", ["fsync", "group"])
def test_an_fsync_failure_is_fatal_for_the_journal_object(tmp_path: Path, policy: str) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path, nodes=1).close()
    journal = JsonlJournal(path, durability=policy, file_ops=FailingFsyncOps(ok=0))
    with pytest.raises(DurabilityError):
        journal.append([user("a", "m0")], expected=journal.head())
    size = path.stat().st_size
    with pytest.raises(JournalFailedError) as caught:
        journal.append([user("b", "a")], expected=journal.head())
    assert isinstance(caught.value.cause, DurabilityError)
    assert path.stat().st_size == size, "a refused append writes nothing"


@pytest.mark.parametrize("policy", ["fsync", "group"])
def test_a_durability_error_says_what_was_written_and_the_head_that_includes_it(
    tmp_path: Path, policy: str
) -> None:
    """Issue 12: DurabilityError is the one error after which records are in the file; it says which."""
    path = tmp_path / "s.jsonl"
    make_file(path, nodes=1).close()
    journal = JsonlJournal(path, durability=policy, file_ops=FailingFsyncOps(ok=0))
    prior = journal.head()
    with pytest.raises(DurabilityError) as caught:
        journal.append([user("a", "m0"), user("b", "a")], expected=prior)
    error = caught.value
    assert error.result is not None
    assert error.result.prior == prior
    assert [r.id for r in error.result.records] == ["a", "b"]
    assert error.head == error.result.head == journal.head(), "the head after the error includes them"
    with JsonlJournal(path, create=False) as reader:
        assert [r.id for r in reader.read(after=prior.seq)] == ["a", "b"], "readers see what was written"


# --- damage: detect, refuse, repair ---------------------------------------------------------------


def test_truncating_the_last_record_at_every_byte_is_a_torn_tail_that_repair_fixes(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    make_file(source, nodes=3).close()
    data = source.read_bytes()
    last = line_offsets(source)[-1]
    committed = data[:last]
    for cut in range(last + 1, len(data)):
        path = tmp_path / f"cut-{cut}.jsonl"
        path.write_bytes(data[:cut])
        journal = JsonlJournal(path)
        assert journal.damage is not None, cut
        assert journal.damage.torn, cut
        assert journal.head().seq == 3, "every record before the torn one is kept"
        assert [r.seq for r in journal.read()] == [1, 2, 3]
        with pytest.raises(TornTailError) as caught:
            journal.append([user("x", "m1")], expected=journal.head())
        assert (caught.value.offset, caught.value.seq) == (last, 4)
        assert path.read_bytes() == data[:cut], "detection changes nothing on disk"
        receipt = journal.repair()
        assert receipt.removed_bytes == cut - last
        assert Path(receipt.quarantine_path or "").read_bytes() == data[last:cut]
        assert path.read_bytes() == committed
        journal.append([user("x", "m1")], expected=journal.head())
        assert verify(journal).ok
        journal.close()


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b"\x00" * 300, "zero"),
        (b'{"seq":6,"garbage":\n', "unknown field"),
        (b"\xff\xfe\n", "malformed"),
    ],
)
def test_damaged_final_bytes_are_a_torn_tail(tmp_path: Path, tail: bytes, reason: str) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path).close()
    path.write_bytes(path.read_bytes() + tail)
    with JsonlJournal(path) as journal:
        assert journal.damage is not None
        assert journal.damage.torn
        assert reason in journal.damage.reason
        assert journal.head().seq == 5


def test_a_chain_broken_only_at_the_last_line_is_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path).close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].replace(b"answer", b"ANSWER")
    path.write_bytes(b"".join(lines))
    with JsonlJournal(path) as journal:
        assert journal.damage is not None
        assert journal.damage.torn
        assert "digest" in journal.damage.reason
        assert journal.head().seq == 4


def test_a_garbled_byte_in_the_middle_is_corruption_at_the_right_seq(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path, nodes=6, sidecar=False).close()  # no checkpoint: the open proves every line
    offsets = line_offsets(path)
    data = bytearray(path.read_bytes())
    data[offsets[3] + 40] ^= 0x01  # a byte inside seq 4
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptJournalError) as caught:
        JsonlJournal(path)
    assert caught.value.seq == 4
    assert caught.value.offset == offsets[3]
    with JsonlJournal(path, read_prefix=True) as prefix:
        assert [r.seq for r in prefix.read()] == [1, 2, 3]
        with pytest.raises(CorruptJournalError):
            prefix.append([user("x", "m1")], expected=prefix.head())
        with pytest.raises(CorruptJournalError):
            prefix.repair()
    report = verify_file(path)
    assert (report.ok, report.bad_seq, report.offset) == (False, 4, offsets[3])


def test_opening_with_the_repair_policy_repairs_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path).close()
    path.write_bytes(path.read_bytes() + b'{"seq":6')
    with JsonlJournal(path, on_torn_tail="repair") as journal:
        assert journal.repair_receipt is not None
        assert journal.repair_receipt.removed_bytes == 8
        assert journal.damage is None
        journal.append([user("x", "m3")], expected=journal.head())


def test_repair_without_damage_removes_nothing(tmp_path: Path) -> None:
    with make_file(tmp_path / "s.jsonl") as journal:
        receipt = journal.repair()
        assert not receipt.repaired
        assert receipt.quarantine_path is None


def test_a_torn_tail_written_by_another_process_is_refused_by_a_live_object(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with make_file(path) as journal:
        with path.open("ab") as other:
            other.write(b'{"seq":6,"id":')
        with pytest.raises(TornTailError):
            journal.append([user("x", "m3")], expected=journal.head())


# --- crashes against a disk that loses unsynced bytes ---------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_every_append_acknowledged_under_fsync_survives_a_crash(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "s.jsonl"
    make_file(path, nodes=0).close()
    acknowledged: list[str] = []
    for crash in range(6):
        ops = CrashableFileOps(path)
        journal = JsonlJournal(
            path, durability=rng.choice(["fsync", "group"]), file_ops=ops, on_torn_tail="repair"
        )
        session = Session(journal)
        for i in range(rng.randrange(1, 8)):
            acknowledged.append(session.user(f"crash {crash} turn {i}").id)
        # Unsynced writes the crash may lose: written under `none` by a second object.
        loose = JsonlJournal(path, durability="none", file_ops=ops)
        Session(loose).user("never acknowledged as durable")
        ops.crash(rng)
        loose._release_files()
        journal._release_files()
        with JsonlJournal(path, on_torn_tail="repair") as reopened:
            ids = {r.id for r in reopened.read()}
            assert set(acknowledged) <= ids
            assert verify(reopened).ok


def test_head_of_an_empty_file_is_genesis(tmp_path: Path) -> None:
    with JsonlJournal(tmp_path / "empty.jsonl") as journal:
        assert journal.head() == GENESIS == Head(0, "0" * 64)
        assert os.path.getsize(tmp_path / "empty.jsonl") == 0


def test_a_readonly_journal_reads_creates_nothing_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    make_file(path, sidecar=False).close()
    with JsonlJournal(path, readonly=True) as journal:
        assert journal.head().seq == 5
        with pytest.raises(StorageError, match="read-only"):
            journal.append([user("x", "m3")], expected=journal.head())
        with pytest.raises(StorageError, match="read-only"):
            journal.repair()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    with pytest.raises(StorageError):
        JsonlJournal(tmp_path / "missing.jsonl", readonly=True)


def test_a_live_object_recovers_after_another_object_repairs_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with make_file(path) as live:
        with path.open("ab") as crashed:
            crashed.write(b'{"seq":6,"id":')  # a writer killed mid-write
        with pytest.raises(TornTailError):
            live.append([user("x", "m3")], expected=live.head())
        with JsonlJournal(path, on_torn_tail="repair") as host:
            assert host.repair_receipt is not None
            host.append([user("from-host", "m3")], expected=host.head())
        assert live.damage is not None
        head = live.head()
        assert live.damage is None
        assert head.seq == 6
        live.append([user("from-live", "from-host")], expected=head)
        assert [r.id for r in live.read(after=5)] == ["from-host", "from-live"]


def test_a_well_chained_record_that_breaks_a_session_rule_is_corruption_even_before_a_torn_tail(
    tmp_path: Path,
) -> None:
    from waybook.codecs._wire import seal

    path = tmp_path / "s.jsonl"
    make_file(path, nodes=2).close()
    head = JsonlJournal(path, readonly=True).head()
    # A foreign writer chains a node whose parent is not the leaf, then writes a damaged final line.
    _, bad = seal(head.seq + 1, user("rogue", None), head.digest)
    with path.open("ab") as file:
        file.write(bad + b"\n" + b'{"seq":99,"garbage"}\n')
    with pytest.raises(CorruptJournalError) as caught:
        JsonlJournal(path)
    assert caught.value.seq == head.seq + 1
    assert "leaf" in caught.value.reason


def test_a_reused_id_far_back_in_a_file_is_corruption_on_open(tmp_path: Path) -> None:
    """The id index's buckets hold thousands of replayed ids; a well-chained record reusing one of them
    is found on open, at its seq."""
    from waybook.codecs._wire import seal
    from waybook.model._head import GENESIS_DIGEST

    n = COMPACT_ABOVE + 1000  # past the threshold, so the reused id is found in the compact index
    records = [header(), *(user(f"m{i}", f"m{i - 1}" if i else None) for i in range(n))]
    records += [user("m5", f"m{n - 1}"), user("after", "m5")]
    prev, lines = GENESIS_DIGEST, []
    for seq, new in enumerate(records, start=1):
        record, line = seal(seq, new, prev)
        prev = record.digest
        lines.append(line + b"\n")
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorruptJournalError) as caught:
        JsonlJournal(path)
    assert path.stat().st_size > 1 << 20
    assert caught.value.seq == n + 2
    assert "already used" in caught.value.reason
    with JsonlJournal(path, read_prefix=True, readonly=True) as prefix:
        assert prefix.head().seq == n + 1
