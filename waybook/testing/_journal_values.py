"""The journal contract's R14 (docs/journal-contract.md): encoding fails closed at every depth.

Every free-form field of a body (header `metadata`, `details`, custom and annotation `data`, tool call
`arguments`) holds JSON data or registered values only, however deep; anything else, NaN and the
infinities are refused with a typed error naming the path, and nothing is written.
"""

from __future__ import annotations

import datetime
import math

import attrs
import msgspec
import pytest

from waybook.codecs import NotJsonDataError, UnregisteredValueError
from waybook.journal import SessionJournal
from waybook.model import GENESIS, Header, NewRecord
from waybook.testing._journal_base import JournalFactory, stored
from waybook.testing._records import AT, FREE_FIELDS, user


@attrs.frozen
class _Unregistered:
    """A class no test registers: it must never reach the wire by its attribute names."""

    name: str


_OFFENCES = {
    "nan": math.nan,
    "infinity": -math.inf,
    "unregistered class": _Unregistered("x"),
    "datetime": datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC),
    "set": frozenset({1}),
}


class FailClosedContract(JournalFactory):
    @pytest.mark.parametrize("offence", sorted(_OFFENCES))
    @pytest.mark.parametrize("field", sorted(FREE_FIELDS))
    def test_r14_what_is_not_json_data_is_refused_at_depth_in_every_field(
        self, journal: SessionJournal, field: str, offence: str
    ) -> None:
        build, path = FREE_FIELDS[field]
        if field == "header metadata":
            head = GENESIS
        else:
            head = self.started(journal)
            head = journal.append([user("u1", None)], expected=head).head
        before = stored(journal)
        body = build(_OFFENCES[offence], "u1")
        if isinstance(body, Header):
            body = msgspec.structs.replace(body, journal=self.journal_id)  # a store checks the name first
        with pytest.raises(NotJsonDataError) as caught:
            journal.append([NewRecord(id="x", at=AT, body=body)], expected=head)
        assert caught.value.path == path
        if offence == "unregistered class":
            assert isinstance(caught.value, UnregisteredValueError)
        assert stored(journal) == before
        assert journal.head() == head

    def test_r14_a_batch_with_one_offence_deep_inside_commits_nothing(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        build, _path = FREE_FIELDS["custom data"]
        batch = [user("a", None), NewRecord(id="b", at=AT, body=build({"ok": [math.nan]}, "a"))]
        with pytest.raises(NotJsonDataError):
            journal.append(batch, expected=head)
        assert journal.head() == head
        assert [r.id for r in journal.read()] == ["h"]
