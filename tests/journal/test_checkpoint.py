"""The reopen checkpoint (`PATH.checkpoint`): a reopen decodes only the tail written since, after
proving by one SHA-256 pass that no byte of the checkpointed prefix changed; the checkpoint is a cache:
rebuilt when missing, stale or damaged, never trusted past the journal's bytes. `trust_checkpoint=True`
is the explicit fast path that reads only the header and the head line."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.builders import chat, header, move, user
from tests.helpers.faults import SIDECAR_DAMAGE, CountingFileOps
from waybook import GENESIS, JsonlJournal
from waybook.journal import verify_file
from waybook.journal._jsonl import checkpoint_path
from waybook.model import CorruptJournalError, DuplicateIdError, JournalError, TornTailError


def write_session(path: Path, nodes: int = 40, **options: object) -> None:
    with JsonlJournal(path, **options) as journal:  # type: ignore[arg-type]
        head = journal.append([header()], expected=GENESIS).head
        for record in chat(nodes):
            head = journal.append([record], expected=head).head


def full_open_facts(path: Path) -> tuple[object, ...]:
    with JsonlJournal(path, create=False, sidecar=False, readonly=True) as journal:
        return facts(journal)


def facts(journal: JsonlJournal) -> tuple[object, ...]:
    journal.check_invariants()
    return journal.position(), list(journal.read_lines()), list(journal._offsets), journal._end


def test_a_writer_leaves_a_checkpoint_and_a_trusting_reopen_reads_only_the_head_line_and_the_tail(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    assert checkpoint_path(path).is_file()
    head_offset = path.read_bytes().rstrip(b"\n").rfind(b"\n") + 1
    ops = CountingFileOps()
    with JsonlJournal(path, create=False, file_ops=ops, trust_checkpoint=True) as journal:
        header_end = path.read_bytes().find(b"\n") + 1
        assert sorted(set(ops.reads)) == [0, head_offset]  # the header line and the head line only
        assert all(offset in (0, head_offset) for offset in ops.reads)
        assert header_end < head_offset
        assert facts(journal) == full_open_facts(path)


def test_a_restored_journal_keeps_every_rule_about_the_prefix(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=10)
    with JsonlJournal(path, create=False) as journal:
        head = journal.head()
        with pytest.raises(DuplicateIdError):
            journal.append([user("m3", "m9")], expected=head)  # an id from the checkpointed prefix
        head = journal.append([move("mv", "m9", "m2")], expected=head).head  # a node from the prefix
        journal.append([user("after", "m2")], expected=head)
        assert facts(journal)[0] == full_open_facts(path)[0]


def test_records_written_after_the_checkpoint_are_proved_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=6)
    saved = checkpoint_path(path).read_bytes()
    with JsonlJournal(path, create=False, sidecar=False) as other:  # a writer that leaves no checkpoint
        head = other.head()
        for record in chat(5, start_parent="m5", prefix="t"):
            head = other.append([record], expected=head).head
    assert checkpoint_path(path).read_bytes() == saved  # stale now: it vouches for a prefix
    with JsonlJournal(path, create=False) as journal:
        assert facts(journal) == full_open_facts(path)
    assert checkpoint_path(path).read_bytes() != saved  # the writer's close brought it up to date


def test_a_tail_damaged_after_the_checkpoint_is_still_found(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=6)
    with path.open("ab") as out:
        out.write(b'{"seq":8,"id":"x"')  # a torn append after the checkpoint
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is not None
        with pytest.raises(TornTailError):
            journal.append([user("y", "m5")], expected=journal.head())


@pytest.mark.parametrize("damage", SIDECAR_DAMAGE.values(), ids=SIDECAR_DAMAGE.keys())
def test_a_damaged_checkpoint_is_ignored_and_rebuilt(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    cp = checkpoint_path(path)
    good = cp.read_bytes()
    cp.write_bytes(damage(good))  # type: ignore[operator]
    ops = CountingFileOps()
    head_offset = path.read_bytes().rstrip(b"\n").rfind(b"\n") + 1
    with JsonlJournal(path, create=False, file_ops=ops) as journal:
        assert head_offset not in ops.reads  # proved from the start, in one chunk
        assert facts(journal) == full_open_facts(path)
        journal.append([user("new", "m39")], expected=journal.head())
    head_offset = path.read_bytes().rstrip(b"\n").rfind(b"\n") + 1
    trusting = CountingFileOps()
    with JsonlJournal(path, create=False, file_ops=trusting, trust_checkpoint=True) as journal:
        assert sorted(set(trusting.reads)) == [0, head_offset]  # the rebuilt checkpoint is used again
        assert journal.head().seq == 42


def test_a_checkpoint_is_never_trusted_past_the_journals_own_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_session(first, nodes=40)
    write_session(second, nodes=40, sidecar=False)
    data = bytearray(second.read_bytes())
    data[-30] ^= 1  # b's head line: a different digest at the same offset as a's
    second.write_bytes(bytes(data))
    shutil.copy(checkpoint_path(first), checkpoint_path(second))  # a's checkpoint beside b
    with JsonlJournal(second, create=False) as journal:
        assert journal.damage is not None  # proved from the start: b's last line is torn
        assert journal.head().seq == 40
    first.write_bytes(first.read_bytes()[:-10])  # the file is now shorter than the checkpoint says
    with JsonlJournal(first, create=False) as journal:
        assert journal.head().seq == 40
        assert journal.damage is not None


def test_verify_always_proves_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    data = bytearray(path.read_bytes())
    data[300] ^= 1  # inside the checkpointed prefix
    path.write_bytes(bytes(data))
    report = verify_file(path)
    assert not report.ok
    assert report.bad_seq is not None
    run = subprocess.run(["waybook", "verify", str(path)], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    with pytest.raises(CorruptJournalError):
        JsonlJournal(path, create=False, sidecar=False)


def test_a_journal_opened_without_the_sidecar_neither_reads_nor_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, sidecar=False)
    assert not checkpoint_path(path).exists()
    checkpoint_path(path).write_bytes(b"not read")
    with JsonlJournal(path, create=False, sidecar=False) as journal:
        journal.append([user("x", "m39")], expected=journal.head())
    assert checkpoint_path(path).read_bytes() == b"not read"
    with JsonlJournal(path, create=False, readonly=True):
        pass
    assert checkpoint_path(path).read_bytes() == b"not read"  # a read-only open writes nothing


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(1, 4), st.sampled_from(["keep", "sidecar-off", "stale", "damaged", "deleted"])),
        min_size=1,
        max_size=6,
    )
)
def test_any_history_of_reopens_ends_where_a_full_proof_does(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, str]]
) -> None:
    path = tmp_path_factory.mktemp("cp") / "s.jsonl"
    write_session(path, nodes=2)
    parent, count = "m1", 0
    for batch, mode in steps:
        cp = checkpoint_path(path)
        if mode == "damaged" and cp.exists():
            cp.write_bytes(cp.read_bytes()[:-3])
        elif mode == "deleted":
            cp.unlink(missing_ok=True)
        stale = cp.read_bytes() if mode == "stale" and cp.exists() else None
        with JsonlJournal(path, create=False, sidecar=mode != "sidecar-off") as journal:
            assert facts(journal) == full_open_facts(path)
            records = []
            for _ in range(batch):
                count += 1
                records.append(user(f"p{count}", parent))
                parent = f"p{count}"
            journal.append(records, expected=journal.head())
        if stale is not None:
            cp.write_bytes(stale)
    with JsonlJournal(path, create=False) as journal:
        assert facts(journal) == full_open_facts(path)


def test_a_journal_whose_role_has_rules_of_its_own_is_never_restored_from_a_checkpoint(
    tmp_path: Path,
) -> None:
    from waybook.journal._jsonl import _checkpoint as checkpoints
    from waybook.journal._roles.memory_text import content_digest
    from waybook.model import Header, MemoryWrite, NewRecord
    from waybook.model._errors import MemoryRuleError

    path = tmp_path / "memory.jsonl"
    at = "2026-12-01T09:00:00.000Z"
    header_body = Header(journal="m", creator="t", role="working_memory", metadata={"scope": "s"})
    fixed = "---\nread_only: true\n---\nkeep\n"
    with JsonlJournal(path) as journal:
        head = journal.append([NewRecord(id="h", at=at, body=header_body)], expected=GENESIS).head
        body = MemoryWrite(path="/memories/a.md", text=fixed, digest=content_digest(fixed))
        journal.append([NewRecord(id="w1", at=at, body=body)], expected=head)
        # A checkpoint that proves this very file, as a writer would save for a session journal
        assert checkpoints.save(
            path,
            end=journal._end,
            head=journal.head(),
            offsets=journal._offsets,
            ids=journal._ledger.rules.ids,
            leaf=journal._ledger.rules.leaf,
            prefix_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        )
    assert checkpoints.load(path, size=path.stat().st_size, read_at=lambda n, at: _read(path, n, at))
    with JsonlJournal(path, create=False) as journal:
        change = MemoryWrite(path="/memories/a.md", text="changed", digest=content_digest("changed"))
        with pytest.raises(MemoryRuleError, match="read-only"):  # known only by replaying the file
            journal.append([NewRecord(id="w2", at=at, body=change)], expected=journal.head())


def _read(path: Path, size: int, offset: int) -> bytes:
    with path.open("rb") as f:
        f.seek(offset)
        return f.read(size) if size else f.read()


# --- the default open proves what it serves (issue 27) ----------------------------------------------


def record_starts(data: bytes) -> list[int]:
    return [0, *(i + 1 for i, byte in enumerate(data[:-1]) if byte == 0x0A)]


def flip_in_prefix(path: Path, data: bytes, where: float, delta: int) -> int:
    """Change one byte (same length) before the last record's line, keeping the newline that ends the
    record before it (changed, it makes the last two records one torn final line); the offset changed."""
    last = record_starts(data)[-1]
    offset = min(int(where * (last - 1)), last - 2)
    changed = bytearray(data)
    changed[offset] = (changed[offset] + delta) % 256
    path.write_bytes(bytes(changed))  # same length, same inode; mtime may stay in the same second
    return offset


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(2, 60), where=st.floats(0, 1), delta=st.integers(1, 255))
def test_a_same_length_change_in_the_checkpointed_prefix_is_refused_by_a_default_open(
    tmp_path_factory: pytest.TempPathFactory, nodes: int, where: float, delta: int
) -> None:
    path = tmp_path_factory.mktemp("cp") / "s.jsonl"
    write_session(path, nodes=nodes)
    assert checkpoint_path(path).is_file()
    data = path.read_bytes()
    flip_in_prefix(path, data, where, delta)
    with pytest.raises(JournalError):
        JsonlJournal(path, create=False)
    with pytest.raises(JournalError):
        JsonlJournal(path, create=False, readonly=True)
    assert not verify_file(path).ok


def test_the_trusting_fast_path_is_explicit_and_does_not_see_a_change_in_the_prefix(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=20)
    data = path.read_bytes()
    offset = data.index(b'"text":"') + len(b'"text":"')
    flip_in_prefix(path, data, offset / (record_starts(data)[-1] - 1), 1)
    with JsonlJournal(path, create=False, trust_checkpoint=True, readonly=True) as journal:
        assert journal.head().seq == 21  # served unproven: what the option's name says
    with pytest.raises(CorruptJournalError):
        JsonlJournal(path, create=False, readonly=True)


def test_a_trusting_writer_leaves_the_checkpoint_it_could_not_prove(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=5)
    saved = checkpoint_path(path).read_bytes()
    with JsonlJournal(path, create=False, trust_checkpoint=True) as journal:
        journal.append([user("t1", "m4")], expected=journal.head())
    assert checkpoint_path(path).read_bytes() == saved  # it vouches for what a proof saw, never more
    with JsonlJournal(path, create=False) as journal:
        assert facts(journal) == full_open_facts(path)
    assert checkpoint_path(path).read_bytes() != saved


def test_a_checkpoint_of_the_old_format_is_ignored_and_the_file_proved_in_full(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, nodes=5)
    cp = checkpoint_path(path)
    cp.write_bytes(cp.read_bytes().replace(b"waybook.checkpoint/2", b"waybook.checkpoint/1", 1))
    with JsonlJournal(path, create=False) as journal:
        assert facts(journal) == full_open_facts(path)
    assert cp.read_bytes().startswith(b"waybook.checkpoint/2\n")


def reseal(path: Path, **changes: object) -> None:
    """Rewrite the checkpoint of `path` with `changes` to its payload and a checksum that holds: what
    only someone crafting a sidecar by hand could write."""
    import msgspec

    from waybook.journal._jsonl import _checkpoint

    cp = checkpoint_path(path)
    start = len(_checkpoint._MAGIC) + _checkpoint._DIGEST_BYTES
    payload = msgspec.structs.replace(_checkpoint._DECODER.decode(cp.read_bytes()[start:]), **changes)
    body = _checkpoint._ENCODER.encode(payload)
    cp.write_bytes(_checkpoint._MAGIC + hashlib.sha256(body).hexdigest().encode() + body)


@pytest.mark.parametrize("not_nodes", [[0], [-1], [10_000]], ids=["zero", "negative", "past-the-head"])
def test_a_checkpoint_naming_a_seq_no_record_has_is_refused(tmp_path: Path, not_nodes: list[int]) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    reseal(path)  # the same payload sealed again is still taken
    with JsonlJournal(path, create=False, trust_checkpoint=True) as journal:
        assert journal._checkpointed
    reseal(path, not_nodes=not_nodes)
    with JsonlJournal(path, create=False, trust_checkpoint=True, readonly=True) as journal:
        assert not journal._checkpointed  # not restored: proved in full
        assert facts(journal) == full_open_facts(path)
