"""Annotations: an extension's data attached to an existing node, without moving the leaf."""

from __future__ import annotations

import pytest

from tests.builders import AT, header, user
from waybook.journal import (
    Annotation,
    InvalidRecordError,
    NewRecord,
    SessionJournal,
    UnknownNodeError,
)
from waybook.projections._base import fold
from waybook.projections._tree import TreeProjection


def annotation(record_id: str, target: str, kind: str = "ext.note", data: object = None) -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=Annotation(target=target, type=kind, data=data))


def test_an_annotation_attaches_to_an_earlier_node_and_leaves_the_leaf_where_it_was(
    journal: SessionJournal,
) -> None:
    head = journal.append([header(), user("u1", None), user("u2", "u1")], expected=journal.head()).head
    result = journal.append([annotation("n1", "u1", data={"k": [1, 2]})], expected=head)
    # the next node still extends u2: the annotation did not move the leaf
    journal.append([user("u3", "u2")], expected=result.head)
    note = next(r for r in journal.read() if r.id == "n1")
    assert note.body == Annotation(target="u1", type="ext.note", data={"k": [1, 2]})
    tree = fold(TreeProjection(), journal.read())
    assert tree.leaf_id == "u3"


def test_an_annotation_of_an_unknown_node_is_refused_before_anything_is_written(
    journal: SessionJournal,
) -> None:
    head = journal.append([header(), user("u1", None)], expected=journal.head()).head
    with pytest.raises(UnknownNodeError, match="nowhere"):
        journal.append([annotation("n1", "nowhere")], expected=head)
    assert journal.head() == head


def test_an_annotation_may_target_a_node_of_the_same_batch(journal: SessionJournal) -> None:
    journal.append([header(), user("u1", None), annotation("n1", "u1")], expected=journal.head())
    assert [r.id for r in journal.read()] == ["h", "u1", "n1"]


def test_an_annotation_needs_a_namespaced_type(journal: SessionJournal) -> None:
    head = journal.append([header(), user("u1", None)], expected=journal.head()).head
    with pytest.raises(InvalidRecordError, match="namespaced"):
        journal.append([annotation("n1", "u1", kind="note")], expected=head)
    assert journal.head() == head
