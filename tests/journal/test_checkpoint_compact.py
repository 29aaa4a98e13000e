"""Checkpoints of journals past COMPACT_ABOVE records, whose ids live in the compact index (which keeps
no id strings): a writer's open saves the checkpoint from the ids it scanned, its close from the text of
the checkpoint it saved or loaded and the ids committed since (at most COMPACT_ABOVE of them). Every
answer stays the full proof's; a stale, foreign or damaged checkpoint still means a full proof.

Most tests patch the threshold small (`small`); one runs at the real COMPACT_ABOVE."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.helpers.builders import header, move, user
from tests.helpers.faults import SIDECAR_DAMAGE
from waybook import GENESIS, JsonlJournal
from waybook.journal import _id_index as id_index
from waybook.journal._id_index import COMPACT_ABOVE, CompactIdIndex, DictIdIndex, IdLog
from waybook.journal._jsonl import _open as jsonl_open
from waybook.journal._jsonl import checkpoint_path
from waybook.journal._roles import session as session_rules
from waybook.model import DuplicateIdError, JournalError, NewRecord, Record

LIMIT = 24
"""The patched threshold (and cap): a journal of more records keeps its ids in the compact index."""


def patch_small(setattr_: Callable[[object, str, int], None]) -> None:
    setattr_(session_rules, "COMPACT_ABOVE", LIMIT)
    setattr_(jsonl_open, "COMPACT_ABOVE", LIMIT)
    setattr_(id_index, "RECENT", 8)  # ids reach the buckets (and fingerprints are matched) early


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_small(monkeypatch.setattr)


def chat_with_moves(n: int, leaf: str | None, prefix: str = "m") -> tuple[list[NewRecord], str | None]:
    """n records extending `leaf`: messages, and every tenth a leaf move back three nodes (not a node)."""
    records: list[NewRecord] = []
    nodes: list[str] = []
    for i in range(n):
        if i % 10 == 9 and len(nodes) > 3:
            target = nodes[-3]
            records.append(move(f"{prefix}mv{i}", leaf, target))
            leaf = target
        else:
            rid = f"{prefix}{i}"
            records.append(user(rid, leaf))
            leaf = rid
            nodes.append(rid)
    return records, leaf


def write_file(path: Path, n: int, prefix: str = "m") -> None:
    """A journal of a header and `n` records, written without a checkpoint."""
    records, _ = chat_with_moves(n, None, prefix)
    with JsonlJournal(path, sidecar=False) as journal:
        head = journal.append([header()], expected=GENESIS).head
        for start in range(0, n, 50):
            head = journal.append(records[start : start + 50], expected=head).head
    assert not checkpoint_path(path).exists()


def open_counting(path: Path, **options: object) -> tuple[JsonlJournal, int]:
    """The journal opened, and how many records the open decoded (0: all came from the checkpoint)."""
    kept: list[Record] = []
    journal = JsonlJournal(path, create=False, _decoded=kept, **options)  # type: ignore[arg-type]
    return journal, len(kept)


def questions(path: Path) -> list[str]:
    """Every id in the file, each tampered with, and some never used."""
    with JsonlJournal(path, create=False, sidecar=False, readonly=True) as journal:
        ids = [record.id for record in journal.read()]
    return [*ids, *(f"{rid}x" for rid in ids), *(rid[:-1] for rid in ids if len(rid) > 1), "nope"]


def answers(journal: JsonlJournal, asked: Iterable[str]) -> tuple[object, ...]:
    journal.check_invariants()
    ids = journal._ledger.rules.ids
    replies = [(rid in ids, ids.node(rid)) for rid in asked]
    return journal.position(), list(journal._offsets), journal._end, replies


def full_answers(path: Path, asked: Iterable[str] | None = None) -> tuple[object, ...]:
    asked = questions(path) if asked is None else asked
    with JsonlJournal(path, create=False, sidecar=False, readonly=True) as journal:
        return answers(journal, asked)


def index_kind(journal: JsonlJournal) -> type:
    return type(journal._ledger.rules.ids)


def checkpointed(path: Path, records: int) -> None:
    """Write a journal past the threshold and leave its checkpoint (saved by a writer's open)."""
    write_file(path, records)
    with JsonlJournal(path, create=False) as journal:
        assert type(journal._ledger.rules.ids) is CompactIdIndex
        assert checkpoint_path(path).is_file()
        assert journal._checkpointed == journal._end


# --- saved at open, restored on the next one -----------------------------------------------------------


def test_a_compact_journal_saves_its_checkpoint_at_open_and_the_next_open_restores_from_it(
    tmp_path: Path, small: None
) -> None:
    path = tmp_path / "s.jsonl"
    write_file(path, 100)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 101  # a full proof
        assert type(journal._ledger.rules.ids) is CompactIdIndex
        saved = checkpoint_path(path).read_bytes()  # saved before close, by the open
        assert journal._checkpointed == journal._end == path.stat().st_size
        assert journal._id_log is not None  # logging from the checkpoint on: nothing kept past the open
        assert journal._id_log.ids == []
        assert answers(journal, questions(path)) == full_answers(path)
    assert checkpoint_path(path).read_bytes() == saved  # nothing new to save at close
    for options in ({}, {"readonly": True}, {"trust_checkpoint": True}):
        journal, decoded = open_counting(path, **options)
        with journal:
            assert decoded == 0  # every record from the checkpoint
            assert type(journal._ledger.rules.ids) is CompactIdIndex
            assert answers(journal, questions(path)) == full_answers(path)
    assert checkpoint_path(path).read_bytes() == saved


def _sealed_file(path: Path, n: int) -> None:
    """A valid journal of a header and n - 1 messages, sealed directly (fast at the real threshold)."""
    from waybook.codecs._wire import seal
    from waybook.model._head import GENESIS_DIGEST

    prev = GENESIS_DIGEST
    parent = None
    with path.open("wb") as out:
        for seq in range(1, n + 1):
            new = header() if seq == 1 else user(f"n{seq}", parent)
            parent = None if seq == 1 else f"n{seq}"
            record, line = seal(seq, new, prev)
            prev = record.digest
            out.write(line + b"\n")


def test_at_the_real_threshold_the_checkpoint_is_saved_and_used(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    n = COMPACT_ABOVE + 300
    _sealed_file(path, n)
    asked = [f"n{seq}" for seq in (2, 17, COMPACT_ABOVE, n)] + ["h", "n1", f"n{n + 1}", "n17x", "nope"]
    expected = full_answers(path, asked)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == n
        assert checkpoint_path(path).is_file()
        head = journal.head()
        with pytest.raises(DuplicateIdError):
            journal.append([user("n17", f"n{n}")], expected=head)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0
        assert type(journal._ledger.rules.ids) is CompactIdIndex
        assert answers(journal, asked) == expected
        head = journal.append([user("after", f"n{n}")], expected=journal.head()).head
        with pytest.raises(DuplicateIdError):
            journal.append([user("n17", "after")], expected=head)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0  # the close saved the appended record too
        assert answers(journal, [*asked, "after"]) == full_answers(path, [*asked, "after"])


# --- appends after a restore ---------------------------------------------------------------------------


def test_appends_after_a_restore_keep_the_rules_and_close_saves_them(tmp_path: Path, small: None) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 100)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0
        head, leaf = journal.position()
        for old in ("h", "m0", "m5", "mmv9"):  # ids of the checkpointed prefix, nodes or not
            with pytest.raises(DuplicateIdError):
                journal.append([user(old, leaf)], expected=head)
        with pytest.raises(DuplicateIdError):
            journal.append([user("b1", leaf), user("m7", "b1")], expected=head)
        head = journal.append([move("back", leaf, "m3")], expected=head).head  # a node of the prefix
        head = journal.append([user("a1", "m3")], expected=head).head
        head = journal.append(
            [user("a2", "a1"), move("a3", "a2", "m0"), user("a4", "m0")], expected=head
        ).head
        assert head == journal.head()
    assert checkpoint_path(path).is_file()
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0  # the close vouched for every appended record
        assert journal._end == path.stat().st_size
        assert answers(journal, questions(path)) == full_answers(path)
        with pytest.raises(DuplicateIdError):
            journal.append([user("a2", "a4")], expected=journal.head())


def test_a_dict_journal_that_grows_past_the_threshold_while_open_saves_at_close(
    tmp_path: Path, small: None
) -> None:
    path = tmp_path / "s.jsonl"
    records, leaf = chat_with_moves(LIMIT - 5, None)
    with JsonlJournal(path) as journal:  # saves a dict-mode checkpoint at close
        journal.append([header(), *records], expected=GENESIS)
    with JsonlJournal(path, create=False) as journal:
        assert index_kind(journal) is DictIdIndex
        head = journal.head()
        more, leaf = chat_with_moves(20, leaf, prefix="g")
        for record in more:
            head = journal.append([record], expected=head).head
        assert index_kind(journal) is CompactIdIndex
        journal.check_invariants()
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0
        assert answers(journal, questions(path)) == full_answers(path)


def test_without_a_checkpoint_to_continue_a_journal_grown_past_the_cap_is_proved_on_reopen(
    tmp_path: Path, small: None
) -> None:
    path = tmp_path / "s.jsonl"
    records, leaf = chat_with_moves(LIMIT - 5, None)
    with JsonlJournal(path, sidecar=False) as journal:
        journal.append([header(), *records], expected=GENESIS)
    with JsonlJournal(path, create=False) as journal:  # no checkpoint: all its ids would be new
        head = journal.head()
        for record in chat_with_moves(20, leaf, prefix="g")[0]:
            head = journal.append([record], expected=head).head
    assert not checkpoint_path(path).exists()
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == journal.head().seq
        assert answers(journal, questions(path)) == full_answers(path)
    assert checkpoint_path(path).is_file()  # that open saved one


def test_other_writers_records_are_taken_into_the_saved_checkpoint(tmp_path: Path, small: None) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 60)
    with JsonlJournal(path, create=False) as journal:
        head, leaf = journal.position()
        with JsonlJournal(path, create=False, sidecar=False) as other:
            for i in range(4):
                head = other.append([user(f"o{i}", leaf)], expected=head).head
                leaf = f"o{i}"
        assert journal.head() == head  # taken in by a refresh
        head = journal.append([user("w1", leaf), move("w2", "w1", "o1")], expected=head).head
        with pytest.raises(DuplicateIdError):
            journal.append([user("o2", "o1")], expected=head)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0
        assert answers(journal, questions(path)) == full_answers(path)


# --- stale, foreign and damaged checkpoints --------------------------------------------------------------


@pytest.mark.parametrize("damage", SIDECAR_DAMAGE.values(), ids=SIDECAR_DAMAGE.keys())
def test_a_damaged_sidecar_means_a_full_proof_and_a_fresh_checkpoint(
    tmp_path: Path, small: None, damage: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 80)
    cp = checkpoint_path(path)
    good = cp.read_bytes()
    cp.write_bytes(damage(good))
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == journal.head().seq
        assert answers(journal, questions(path)) == full_answers(path)
    assert cp.read_bytes() == good  # the same prefix, proved again: the same checkpoint
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0


def test_a_checkpoint_from_another_file_means_a_full_proof(tmp_path: Path, small: None) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    checkpointed(first, 80)
    write_file(second, 80, prefix="q")  # as long, other ids
    shutil.copy(checkpoint_path(first), checkpoint_path(second))
    journal, decoded = open_counting(second)
    with journal:
        assert decoded == journal.head().seq
        assert answers(journal, questions(second)) == full_answers(second)
        assert "m5" not in journal._ledger.rules.ids
    journal, decoded = open_counting(second)
    with journal:
        assert decoded == 0  # b's own checkpoint now
        assert answers(journal, questions(second)) == full_answers(second)


def test_a_changed_prefix_is_never_restored(tmp_path: Path, small: None) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 80)
    stale = checkpoint_path(path).read_bytes()
    path.unlink()
    checkpoint_path(path).unlink()
    write_file(path, 80, prefix="q")  # another valid history at the path, under the old checkpoint
    checkpoint_path(path).write_bytes(stale)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == journal.head().seq
        assert answers(journal, questions(path)) == full_answers(path)
    data = bytearray(path.read_bytes())
    data[200] ^= 1  # one byte of the checkpointed prefix
    path.write_bytes(bytes(data))
    with pytest.raises(JournalError):
        JsonlJournal(path, create=False)
    with pytest.raises(JournalError):
        JsonlJournal(path, create=False, sidecar=False, readonly=True)


def test_another_writers_checkpoint_replacing_ours_is_left_alone(tmp_path: Path, small: None) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 60)
    ours = JsonlJournal(path, create=False)
    head, leaf = ours.position()
    with JsonlJournal(path, create=False) as other:
        for i in range(5):
            head = other.append([user(f"o{i}", leaf)], expected=head).head
            leaf = f"o{i}"
    theirs = checkpoint_path(path).read_bytes()  # saved at their close, for a longer prefix
    head = ours.append([user("w1", leaf)], expected=ours.head()).head
    ours.append([user("w2", "w1")], expected=head)
    ours.close()
    assert checkpoint_path(path).read_bytes() == theirs  # not the checkpoint ours loaded: nothing saved
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 2  # their checkpoint, then our two records proved
        assert answers(journal, questions(path)) == full_answers(path)


def test_a_foreign_checkpoint_put_in_while_open_is_not_continued(tmp_path: Path, small: None) -> None:
    path, foreign = tmp_path / "s.jsonl", tmp_path / "f.jsonl"
    checkpointed(path, 60)
    checkpointed(foreign, 70)
    with JsonlJournal(path, create=False) as journal:
        head, leaf = journal.position()
        journal.append([user("w1", leaf)], expected=head)
        shutil.copy(checkpoint_path(foreign), checkpoint_path(path))
    assert checkpoint_path(path).read_bytes() == checkpoint_path(foreign).read_bytes()
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == journal.head().seq
        assert answers(journal, questions(path)) == full_answers(path)


# --- the cap, and the objects that never save -----------------------------------------------------------


@pytest.mark.parametrize("appended", [LIMIT, LIMIT + 1])
def test_past_the_cap_close_saves_nothing_and_the_next_open_proves_the_tail(
    tmp_path: Path, small: None, appended: int
) -> None:
    path = tmp_path / "s.jsonl"
    checkpointed(path, 60)
    saved = checkpoint_path(path).read_bytes()
    with JsonlJournal(path, create=False) as journal:
        head, leaf = journal.position()
        for record in chat_with_moves(appended, leaf, prefix="c")[0]:
            head = journal.append([record], expected=head).head
        assert journal._id_log is not None
        assert (journal._id_log.ids is None) == (appended > LIMIT)
        journal.check_invariants()
    assert (checkpoint_path(path).read_bytes() == saved) == (appended > LIMIT)  # past the cap: not saved
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == (appended if appended > LIMIT else 0)
        assert answers(journal, questions(path)) == full_answers(path)
    journal, decoded = open_counting(path)
    with journal:
        assert decoded == 0  # the open that proved the tail saved it


def test_readonly_trusting_and_damaged_opens_never_save(tmp_path: Path, small: None) -> None:
    path = tmp_path / "s.jsonl"
    write_file(path, 60)
    with JsonlJournal(path, create=False, readonly=True) as journal:
        assert type(journal._ledger.rules.ids) is CompactIdIndex
    with JsonlJournal(path, create=False, trust_checkpoint=True) as journal:
        head, leaf = journal.position()
        journal.append([user("t1", leaf)], expected=head)
    with JsonlJournal(path, create=False, sidecar=False) as journal:
        journal.append([user("t2", "t1")], expected=journal.head())
    with path.open("ab") as out:
        out.write(b'{"seq":63,"id":"torn"')
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is not None
    assert not checkpoint_path(path).exists()


def test_an_id_log_holds_the_ids_from_its_first_seq_in_order_or_none() -> None:
    log = IdLog(4, limit=5)
    assert log.add({"a": False, "b": True, "c": True, "d": False, "e": True}, 1)  # a load from seq 1
    assert (log.ids, log.not_nodes) == (["d", "e"], [4])
    assert log.nodes(["f", "g"], 6)
    assert log.add({"h": True}, 8)
    assert (log.ids, log.not_nodes) == (["d", "e", "f", "g", "h"], [4])
    assert not log.add({"i": True}, 9)  # past the limit: dropped, for good
    assert (log.ids, log.not_nodes) == (None, [])
    assert not log.nodes(["j"], 10)
    gap = IdLog(1)
    assert gap.nodes(["a"], 1)
    assert not gap.add({"c": True}, 3)  # a seq missed: nothing it holds could be saved
    assert gap.ids is None
    before = IdLog(10)
    assert before.add(dict.fromkeys("abc", True), 1)  # all before its first seq (a restored checkpoint)
    assert before.ids == []


# --- any history ----------------------------------------------------------------------------------------


class CompactCheckpoints(RuleBasedStateMachine):
    """Appends, closes, reopens of every kind and tampering with the sidecar, against a model of the
    journal (its ids and whether each is a node, the head seq, the leaf)."""

    def __init__(self) -> None:
        super().__init__()
        self._undo: list[tuple[object, str, object]] = []
        patch_small(self._patch)
        import tempfile

        self.dir = Path(tempfile.mkdtemp(prefix="cpc-"))
        self.path = self.dir / "s.jsonl"
        self.model: dict[str, bool] = {}
        self.leaf: str | None = None
        self.count = 0
        self.stale: bytes | None = None
        self.journal: JsonlJournal | None = JsonlJournal(self.path)
        self._append([header(), *chat_with_moves(LIMIT - 4, None, prefix="s")[0]])  # near the threshold

    def _patch(self, target: object, name: str, value: int) -> None:
        self._undo.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def teardown(self) -> None:
        if self.journal is not None:
            self.journal.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        for target, name, value in reversed(self._undo):
            setattr(target, name, value)

    def _append(self, records: list[NewRecord]) -> None:
        assert self.journal is not None
        self.journal.append(records, expected=self.journal.head())
        for record in records:
            self.model[record.id] = record.body.IS_NODE
            self.leaf = record.id if record.body.IS_NODE else getattr(record.body, "to_leaf", self.leaf)
        self.count += len(records)

    def _fresh(self) -> str:
        return f"r{len(self.model)}"

    @precondition(lambda self: self.journal is not None and not self.journal._readonly)
    @rule(k=st.integers(1, 12))
    def messages(self, k: int) -> None:
        parent = self.leaf
        records = []
        for i in range(k):
            rid = f"{self._fresh()}_{i}"
            records.append(user(rid, parent))
            parent = rid
        self._append(records)  # one record: the flat path; more: a batch

    @precondition(
        lambda self: self.journal is not None and not self.journal._readonly and len(self.model) > 1
    )
    @rule(data=st.data())
    def duplicate(self, data: st.DataObject) -> None:
        assert self.journal is not None
        old = data.draw(st.sampled_from(sorted(self.model)))
        head = self.journal.head()
        with pytest.raises(DuplicateIdError):
            self.journal.append([user(old, self.leaf)], expected=head)
        with pytest.raises(DuplicateIdError):
            self.journal.append([user(self._fresh(), self.leaf), user(old, self._fresh())], expected=head)
        assert self.journal.head() == head

    @precondition(lambda self: self.journal is not None and not self.journal._readonly)
    @rule(data=st.data())
    def leaf_move(self, data: st.DataObject) -> None:
        nodes = sorted(rid for rid, node in self.model.items() if node)
        if not nodes:
            return
        target = data.draw(st.sampled_from(nodes))
        self._append([move(f"{self._fresh()}mv", self.leaf, target)])

    @precondition(lambda self: self.journal is not None and not self.journal._readonly)
    @rule()
    def another_writer(self) -> None:
        """Another object appends (its close may save a checkpoint ours did not load)."""
        assert self.journal is not None
        with JsonlJournal(self.path, create=False) as other:
            rid = f"{self._fresh()}o"
            other.append([user(rid, self.leaf)], expected=other.head())
        self.model[rid] = True
        self.leaf = rid
        self.count += 1

    @precondition(lambda self: self.journal is not None)
    @rule()
    def close(self) -> None:
        assert self.journal is not None
        self.journal.close()
        self.journal = None

    @precondition(lambda self: self.journal is None)
    @rule(mode=st.sampled_from(["default", "default", "sidecar-off", "trust", "readonly"]))
    def reopen(self, mode: str) -> None:
        options: dict[str, dict[str, bool]] = {
            "default": {},
            "sidecar-off": {"sidecar": False},
            "trust": {"trust_checkpoint": True},
            "readonly": {"readonly": True},
        }
        self.journal = JsonlJournal(self.path, create=False, **options[mode])  # type: ignore[arg-type]

    @precondition(lambda self: checkpoint_path(self.path).exists())
    @rule(how=st.sampled_from(["truncate", "flip", "delete", "keep-stale", "put-stale"]))
    def tamper(self, how: str) -> None:
        cp = checkpoint_path(self.path)
        data = cp.read_bytes()
        if how == "truncate":
            cp.write_bytes(data[: len(data) // 2])
        elif how == "flip":
            cp.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
        elif how == "delete":
            cp.unlink()
        elif how == "keep-stale":
            self.stale = data
        elif self.stale is not None:
            cp.write_bytes(self.stale)  # an older checkpoint of this very file: still valid for its prefix

    @invariant()
    def answers_are_the_models(self) -> None:
        journal = self.journal
        if journal is None:
            return
        journal.check_invariants()
        head, leaf = journal.position()
        assert (head.seq, leaf) == (self.count, self.leaf)
        ids = journal._ledger.rules.ids
        if len(self.model) > LIMIT:
            assert type(ids) is CompactIdIndex
        asked = [*self.model, *(f"{rid}x" for rid in self.model), "nope"]
        assert [(rid in ids, ids.node(rid)) for rid in asked] == [
            (rid in self.model, self.model.get(rid, False)) for rid in asked
        ]


TestCompactCheckpoints = CompactCheckpoints.TestCase
TestCompactCheckpoints.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
