"""The journal as a session (docs/journal-contract.md R8-R11): ids, the header, the leaf, leaf moves,
terminal assistant entries, and annotations attached beside the tree."""

from __future__ import annotations

import pytest

from waybook.journal import SessionJournal
from waybook.model import (
    GENESIS,
    Annotation,
    AnyBody,
    Compaction,
    ContextExclusion,
    DuplicateIdError,
    InvalidLeafMoveError,
    InvalidRecordError,
    MisplacedHeaderError,
    NewRecord,
    ParentMismatchError,
    PartialAssistantError,
    UnknownNodeError,
)
from waybook.projections import TreeProjection, fold
from waybook.testing._journal_base import JournalFactory
from waybook.testing._records import AT, assistant, move, reset, user


def annotation(record_id: str, target: str, kind: str = "ext.note", data: object = None) -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=Annotation(target=target, type=kind, data=data))


class SessionRulesContract(JournalFactory):
    # --- R8 ---------------------------------------------------------------------------------------

    def test_r8_ids_are_unique_within_a_journal(self, journal: SessionJournal) -> None:
        head = self.started(journal, 1)
        with pytest.raises(DuplicateIdError):
            journal.append([assistant("m0", "m0")], expected=head)
        with pytest.raises(DuplicateIdError):
            journal.append([assistant("x", "m0"), user("x", "x")], expected=head)
        assert journal.head() == head

    def test_r8_the_header_is_first(self, journal: SessionJournal) -> None:
        with pytest.raises(MisplacedHeaderError):
            journal.append([user("u", None)], expected=GENESIS)
        assert journal.head() == GENESIS

    def test_r8_the_header_is_only_first(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        with pytest.raises(MisplacedHeaderError):
            journal.append([self.header("h2")], expected=head)
        assert journal.head() == head

    # --- R9 ---------------------------------------------------------------------------------------

    def test_r9_a_node_must_extend_the_current_leaf(self, journal: SessionJournal) -> None:
        head = self.started(journal, 2)
        with pytest.raises(ParentMismatchError):
            journal.append([user("u", "m0")], expected=head)
        with pytest.raises(ParentMismatchError):
            journal.append([user("u", None)], expected=head)
        assert journal.append([user("u", "m1")], expected=head).head.seq == 4

    def test_r9_only_the_first_node_or_one_after_a_reset_is_a_root(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        head = journal.append([user("a", None)], expected=head).head
        head = journal.append([reset("r")], expected=head).head
        assert journal.append([user("b", None)], expected=head).head.seq == 4

    # --- R10 --------------------------------------------------------------------------------------

    def test_r10_a_leaf_move_starts_at_the_current_leaf(self, journal: SessionJournal) -> None:
        head = self.started(journal, 3)
        with pytest.raises(InvalidLeafMoveError):
            journal.append([move("mv", "m1", "m0")], expected=head)
        assert journal.head() == head

    def test_r10_a_leaf_move_goes_to_a_known_node_or_none(self, journal: SessionJournal) -> None:
        head = self.started(journal, 3)
        with pytest.raises(InvalidLeafMoveError):
            journal.append([move("mv", "m2", "nowhere")], expected=head)
        with pytest.raises(InvalidLeafMoveError):
            journal.append([move("mv", "m2", "h")], expected=head)  # the header is not a node
        assert journal.head() == head
        head = journal.append([move("mv", "m2", "m0"), assistant("alt", "m0")], expected=head).head
        head = journal.append([move("mv2", "alt", None), user("root2", None)], expected=head).head
        assert head.seq == 8

    def test_r10_abandoned_branches_stay_in_the_journal(self, journal: SessionJournal) -> None:
        head = self.started(journal, 3)
        journal.append([move("mv", "m2", "m0"), assistant("alt", "m0")], expected=head)
        assert {"m1", "m2", "alt"} <= {r.id for r in journal.read()}

    def test_r10_references_to_nodes_must_name_known_nodes(self, journal: SessionJournal) -> None:
        head = self.started(journal, 2)
        bad: list[AnyBody] = [
            Compaction(parent="m1", summary="s", first_kept="ghost"),
            ContextExclusion(parent="m1", target="ghost"),
        ]
        for i, body in enumerate(bad):
            with pytest.raises(UnknownNodeError):
                journal.append([NewRecord(id=f"x{i}", at=AT, body=body)], expected=head)
        ok = Compaction(parent="m1", summary="s", first_kept="m1")
        assert journal.append([NewRecord(id="c", at=AT, body=ok)], expected=head).head.seq == 4

    # --- R11 --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("stop", [None, "", "streaming", "partial"])
    def test_r11_a_streaming_partial_assistant_entry_is_refused(
        self, journal: SessionJournal, stop: str | None
    ) -> None:
        head = self.started(journal, 1)
        with pytest.raises(PartialAssistantError):
            journal.append([assistant("a", "m0", stop=stop)], expected=head)
        assert journal.head() == head

    # --- annotations: an extension's data attached to an existing node, without moving the leaf ---

    def test_an_annotation_attaches_to_an_earlier_node_and_leaves_the_leaf_where_it_was(
        self, journal: SessionJournal
    ) -> None:
        head = journal.append(
            [self.header(), user("u1", None), user("u2", "u1")], expected=journal.head()
        ).head
        result = journal.append([annotation("n1", "u1", data={"k": [1, 2]})], expected=head)
        # the next node still extends u2: the annotation did not move the leaf
        journal.append([user("u3", "u2")], expected=result.head)
        note = next(r for r in journal.read() if r.id == "n1")
        assert note.body == Annotation(target="u1", type="ext.note", data={"k": [1, 2]})
        tree = fold(TreeProjection(), journal.read())
        assert tree.leaf_id == "u3"

    def test_an_annotation_of_an_unknown_node_is_refused_before_anything_is_written(
        self, journal: SessionJournal
    ) -> None:
        head = journal.append([self.header(), user("u1", None)], expected=journal.head()).head
        with pytest.raises(UnknownNodeError, match="nowhere"):
            journal.append([annotation("n1", "nowhere")], expected=head)
        assert journal.head() == head

    def test_an_annotation_may_target_a_node_of_the_same_batch(self, journal: SessionJournal) -> None:
        journal.append([self.header(), user("u1", None), annotation("n1", "u1")], expected=journal.head())
        assert [r.id for r in journal.read()] == ["h", "u1", "n1"]

    def test_an_annotation_needs_a_namespaced_type(self, journal: SessionJournal) -> None:
        head = journal.append([self.header(), user("u1", None)], expected=journal.head()).head
        with pytest.raises(InvalidRecordError, match="namespaced"):
            journal.append([annotation("n1", "u1", kind="note")], expected=head)
        assert journal.head() == head
